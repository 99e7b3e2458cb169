"""Property-based fuzz of documents with odd line separators and encodings (docs/reliability.md
records the figures).

The core: files made of random comment and string lines holding form feeds, VT, NEL, U+2028/9,
file separators and non-BMP characters, with random line endings (`\\n`, `\\r\\n`, `\\r`), written
in a random encoding (UTF-8, UTF-8 with a BOM, a latin-1 / cp1252 / utf-8 coding cookie), then a
kernel: the finding is on the kernel's line (counted as Python counts lines), with its column,
and never a PAL000. The server: random incremental edits (LSP ranges in UTF-16 units, inserting
the same odd characters) over a real `pallas-lsp serve`; after each burst, the diagnostics
published for the last version equal a fresh analysis of the text the edits make by LSP's rules:
the server's copy of the document never drifts from the editor's.

PALLAS_LSP_FUZZ_EXAMPLES_SCALE multiplies the number of inputs (1: the CI budget below).
"""

from __future__ import annotations

import itertools
import os
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_wire import WireServer
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.source_text import split_lines
from pallas_lsp.lsp.convert import utf16_column

pytestmark = pytest.mark.slow

SCALE = float(os.environ.get("PALLAS_LSP_FUZZ_EXAMPLES_SCALE", "1"))
CORE_EXAMPLES = int(300 * SCALE)
SERVER_EXAMPLES = int(40 * SCALE)
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

ODD = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
WIDE = ["\U0001F600", "\U00010348"]  # two UTF-16 units each
KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
""")
KERNEL_LINE, KERNEL_COLUMN = 6, 10  # of `pl.get_global(...)` in KERNEL, 0-based

filler = st.text(alphabet=st.sampled_from([*ODD, *WIDE, "a", " ", "\xe9", "'", "\\"]), max_size=12)


@st.composite
def odd_files(draw):
    """(bytes of the file, the line its kernel starts on, its encoding)."""
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "cp1252", "cookie-utf-8"]))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        text = draw(filler).replace("\\", "").replace("'", "")
        lines.append(draw(st.sampled_from([f"# {text}", f"s = '{text}'", f"t = '''{text}'''", f"u = b'x'  # {text}"])))
    header = []
    if encoding in ("latin-1", "cp1252", "cookie-utf-8"):
        header = [f"# -*- coding: {'utf-8' if encoding == 'cookie-utf-8' else encoding} -*-"]
    codec = {"cookie-utf-8": "utf-8"}.get(encoding, encoding)
    lines = [line for line in lines if _encodable(line, codec)]
    source = ending.join([*header, *lines, *KERNEL.split("\n")])
    return source.encode(codec), len(header) + len(lines), encoding


def _encodable(text: str, codec: str) -> bool:
    try:
        text.encode(codec)
    except UnicodeEncodeError:
        return False
    return True


@settings(FUZZ, max_examples=CORE_EXAMPLES)
@given(odd_files())
def test_core_finds_the_kernel_on_its_own_line_in_any_encoding(tmp_path_factory, case):
    data, first_kernel_line, _ = case
    folder = tmp_path_factory.mktemp("fuzz", numbered=True)
    (folder / "k.py").write_bytes(data)
    findings = analyze(Project(root=str(folder), python=sys.executable, use_jedi=False), str(folder / "k.py"))
    assert [(f.code, f.span.line, f.span.column) for f in findings] == [
        ("PAL001", first_kernel_line + KERNEL_LINE, KERNEL_COLUMN)]


# ---- the server -------------------------------------------------------------------------------------

inserted = st.lists(st.sampled_from([*ODD, *WIDE, "\n", "\r\n", "\r", "#", " ", "x", "\xe9"]), max_size=6).map("".join)
edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 4), inserted), min_size=1, max_size=8)


def lsp_position(text: str, offset: int) -> dict:
    """The LSP position (UTF-16 units, LSP's line breaks) of a code-point offset."""
    before = text[:offset]
    lines = split_lines(before + "x")  # the "x" keeps a trailing empty line
    line_text = lines[-1][:-1]
    return {"line": len(lines) - 1, "character": utf16_column(line_text, len(line_text))}


def lsp_safe_offset(text: str, offset: int) -> int:
    """Never split a `\\r\\n` pair: LSP has no position between its two characters."""
    return offset - 1 if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n" else offset


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-ws")
    wire = WireServer(env={**os.environ})
    wire.initialize(str(root), python=sys.executable)
    wire.root = root
    yield wire
    wire.kill()
    print(f"\nserver fuzz: {EDITS_SENT[0]} edits in {next(_documents)} documents")  # for docs/reliability.md (-s)


_documents = itertools.count()
EDITS_SENT = [0]


@settings(FUZZ, max_examples=SERVER_EXAMPLES)
@given(prefix=st.lists(filler, max_size=4), bursts=st.lists(edits, min_size=1, max_size=3))
def test_server_document_never_drifts_from_the_editors(server, prefix, bursts):
    name = f"k{next(_documents)}.py"
    path = server.root / name
    uri = path.as_uri()
    text = "".join(f"# {p}\n" for p in prefix) + KERNEL
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    version = 1
    for burst in bursts:
        for where, length, new_text in burst:
            start = lsp_safe_offset(text, int(where * len(text)))
            end = lsp_safe_offset(text, min(len(text), start + length))
            change = {"range": {"start": lsp_position(text, start), "end": lsp_position(text, end)}, "text": new_text}
            text = text[:start] + new_text + text[end:]
            version += 1
            EDITS_SENT[0] += 1
            server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}})
        published = server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                    and m["params"]["uri"] == uri and m["params"].get("version") == version)
        assert published is not None, "the server exited"
        expected = expected_diagnostics(server.root, path, text)
        got = [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                d["range"]["end"]["line"], d["range"]["end"]["character"]) for d in published["params"]["diagnostics"]]
        assert got == expected
    server.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})


def expected_diagnostics(root, path, text: str) -> list[tuple]:
    lines = split_lines(text)

    def column(line: int, col: int) -> int:
        return utf16_column(lines[line] if line < len(lines) else "", col)

    findings = analyze(Project(root=str(root), python=sys.executable), str(path), text)
    return [(f.code, f.span.line, column(f.span.line, f.span.column), f.span.end_line,
             column(f.span.end_line, f.span.end_column)) for f in findings]


_PIECES = st.sampled_from(["a", "é", "😋", "\f", "\u2028", "\x85", "\n", "\r\n", "\r", " ", "pl"])


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_PIECES, max_size=30).map("".join),
       start=st.tuples(st.integers(0, 8), st.integers(0, 6)), end=st.tuples(st.integers(0, 8), st.integers(0, 6)),
       new=st.lists(_PIECES, max_size=4).map("".join))
def test_an_incremental_edit_makes_the_text_pygls_made_from_split_lines(text, start, end, new):
    """The document applies an edit without splitting itself into lines (memory, big documents):
    the result equals pygls' own edit over LSP's lines, also for ranges past a line or the text."""
    from lsprotocol import types
    from pygls.workspace import TextDocument

    from pallas_lsp.lsp.convert import PythonTextDocument

    if end < start:
        start, end = end, start
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=start[0], character=start[1]),
                          end=types.Position(line=end[0], character=end[1])), text=new)
    ours, pygls = (PythonTextDocument("file:///k.py", text) for _ in range(2))
    ours.apply_change(change)
    TextDocument._apply_incremental_change(pygls, change)
    assert ours.source == pygls.source
