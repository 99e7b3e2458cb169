"""Fixes keep the file's line endings (issue 19, item 14): on a file whose lines end with a bare CR,
`--fix` wrote LF lines and LibCST dropped blank lines and the last line break. `--fix`, `--diff`
and the server's quick fixes must give byte-exact CR, CRLF, LF and mixed files."""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import jax_python, publish_for
from golden_cases import GOLDEN, load_cases
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_server_bad_input import client  # noqa: F401 - the fixture: a server on a temporary folder

# Cases whose fixes insert import lines, statements and list items, remove lines and rewrite `def`s.
CASES = ["input_body_shared_by_two_launches", "input_no_specs_grid0_stored", "input_shape_dtype_struct",
         "input_tuple_specs_interpret_returned", "input_variable_specs_grid2_returned", "operand_pl_kernel_mesh",
         "scratch_list_plgpu_smem", "scratch_dict_plgpu", "index_merged_into_at", "grid_one_block_mesh",
         "semaphore_tpu_to_gpu"]
ENDINGS = {"lf": "\n", "cr": "\r", "crlf": "\r\n"}
BEFORE = {case.name: case.path("before").read_text() for case in load_cases() if case.name in CASES}
SMEM = GOLDEN / "scratch_list_plgpu_smem"


def check(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), *args],
                          capture_output=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def fixed(tmp_path_factory) -> dict[tuple[str, str], bytes]:
    """Every case in every ending, fixed by one real `check --fix --unsafe-fixes` run."""
    folder = tmp_path_factory.mktemp("endings")
    for name, text in BEFORE.items():
        for ending, newline in ENDINGS.items():
            (folder / f"{name}_{ending}.py").write_bytes(text.replace("\n", newline).encode())
    run = check("--fix", "--unsafe-fixes", ".", cwd=folder)
    assert run.returncode in (0, 1), run.stderr
    return {(name, ending): (folder / f"{name}_{ending}.py").read_bytes() for name in BEFORE for ending in ENDINGS}


@pytest.mark.parametrize("ending", ["cr", "crlf"])
@pytest.mark.parametrize("case", CASES)
def test_fix_writes_the_same_lines_with_the_files_own_endings(fixed, case, ending):
    lf = fixed[(case, "lf")].decode()
    assert lf != BEFORE[case]  # something was fixed
    assert fixed[(case, ending)] == lf.replace("\n", ENDINGS[ending]).encode()


def mixed(text: str, newline: str, other: str, other_lines: set[int]) -> str:
    lines = text.split("\n")
    return "".join(line + (other if index in other_lines else newline) for index, line in enumerate(lines[:-1])) + lines[-1]


def kept_or_first(before: str, after: str) -> str:
    """`after` (LF) with each line the fix left alone ending as it did in `before` (mixed endings),
    and each line the fix wrote ending as the file's first line does."""
    old, new = re.findall(r".*?(?:\r\n|\r|\n)", before), after.split("\n")[:-1]
    first = old[0][len(old[0].rstrip("\r\n")):]
    endings = {}
    matcher = difflib.SequenceMatcher(None, [line.rstrip("\r\n") for line in old], new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for offset in range(j2 - j1):
            endings[j1 + offset] = old[i1 + offset][len(old[i1 + offset].rstrip("\r\n")):] if tag == "equal" else first
    return "".join(line + endings[index] for index, line in enumerate(new))


# Lines of the smem case (0-based) far from its edits (the import removed at 3, `def body` at 9-10,
# the list item added after 21), which end in the other style. None is blank: a `\r` line before a
# blank `\n` line would make one `\r\n` line of the two.
OTHER_LINES = {11, 12, 17, 18, 19}


@pytest.mark.parametrize("newline, other", [("\r", "\n"), ("\r\n", "\n"), ("\n", "\r")], ids=["cr+lf", "crlf+lf", "lf+cr"])
def test_fix_of_a_mixed_file_keeps_every_untouched_line_and_writes_the_first_lines_ending(tmp_path, newline, other):
    before = mixed((SMEM / "before.py").read_text(), newline, other, OTHER_LINES)
    (tmp_path / "kernel.py").write_bytes(before.encode())
    run = check("--fix", "kernel.py", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "kernel.py").read_bytes() == kept_or_first(before, (SMEM / "after.py").read_text()).encode()


@pytest.mark.parametrize("ending", ["cr", "crlf", "lf"])
def test_diff_of_a_file_applies_with_git_to_the_fixed_bytes(tmp_path, ending):
    """`git apply` counts lines at `\\n` alone: a CR-only file is one line to it, and has no last line break."""
    newline = ENDINGS[ending]
    before, after = (SMEM / "before.py").read_text(), (SMEM / "after.py").read_text()
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "kernel.py").write_bytes(before.replace("\n", newline).encode())
    run = check("--diff", "kernel.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    (tmp_path.parent / f"{ending}.patch").write_bytes(run.stdout)
    subprocess.run(["git", "apply", str(tmp_path.parent / f"{ending}.patch")], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "kernel.py").read_bytes() == after.replace("\n", newline).encode()


def apply_lsp_edits(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with the edits: lines end at `\\r\\n`, `\\n` or `\\r` (LSP); the text is ASCII."""
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character if position.line < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.parametrize("ending", ["cr", "crlf"])
async def test_the_servers_quick_fix_keeps_the_documents_endings(client: LanguageClient, ending):
    newline = ENDINGS[ending]
    before = (SMEM / "before.py").read_text().replace("\n", newline)
    uri = (Path(client.root) / "kernel.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=before)))
    (diagnostic,) = (await publish_for(client, uri, 1, 60)).diagnostics
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    assert actions[0].title == "pallas-lsp (PAL001): Allocate tile as scratch (scratch_types)"
    (change,) = actions[0].edit.document_changes
    assert apply_lsp_edits(before, change.edits) == (SMEM / "after.py").read_text().replace("\n", newline)


@pytest.mark.parametrize("prefix, encoding", [(b"\xef\xbb\xbf", "utf-8"), (b"# -*- coding: latin-1 -*-\n", "latin-1")],
                         ids=["bom", "latin-1"])
def test_diff_of_an_encoded_file_applies_with_git_to_the_bytes_fix_writes(tmp_path, prefix, encoding):
    """The patch holds each file's own bytes: its BOM, its coding cookie's encoding (a non-ASCII
    comment beside the rewritten `def`, so that it is in the patch)."""
    text = (SMEM / "before.py").read_text().replace("def body", "# caf\xe9\ndef body")
    before = prefix + text.encode(encoding)
    for folder in ("diffed", "fixed"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kernel.py").write_bytes(before)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path / "diffed", check=True)
    run = check("--diff", "kernel.py", cwd=tmp_path / "diffed")
    assert run.returncode == 1, run.stderr
    (tmp_path / "fixes.patch").write_bytes(run.stdout)
    subprocess.run(["git", "apply", str(tmp_path / "fixes.patch")], cwd=tmp_path / "diffed", check=True, capture_output=True)
    assert check("--fix", "kernel.py", cwd=tmp_path / "fixed").returncode == 0
    assert (tmp_path / "diffed" / "kernel.py").read_bytes() == (tmp_path / "fixed" / "kernel.py").read_bytes() != before
