"""Files Python refuses before parsing them get one PAL000 saying what Python says, and every other
file is still checked: a coding cookie naming a codec that is not a text encoding (rot13, base64,
hex, zlib, uu, bz2) or no codec at all, a BOM with another codec's cookie, bytes the file's codec
cannot decode (invalid UTF-8 in a string), a NUL byte. Before: a non-text codec made `check` exit 2
with a traceback and check nothing, and the server answered InternalError to hover, inlay hints and
code lenses; the others got no PAL000 at all. A codec is only ever looked up by name: a module the
repository ships never runs, and a non-text codec never decodes anything."""

from __future__ import annotations

import codecs
import json
import subprocess
import sys
import textwrap

import pytest
from conftest import jax_python
from lsp_wire import WireServer
from pallas_lsp.source_text import QUADRATIC_CODEC_MAX_BYTES

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]
""")
NOT_TEXT = "is not a text encoding; use codecs.decode() to handle arbitrary codecs"
BOM = b"\xef\xbb\xbf"


def pythons_message(data: bytes) -> str:
    """What CPython says compiling these bytes (as `import` does)."""
    try:
        compile(data, "k.py", "exec")
    except SyntaxError as exc:
        return exc.msg
    raise AssertionError("Python accepts these bytes")


def check(cwd, *args):
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--no-jedi", "--format", "json", *args, "."],
                         capture_output=True, text=True, cwd=cwd, timeout=300)
    return run, [(f["path"], f["code"], f["line"], f["column"], f["end_line"], f["end_column"], f["message"])
                 for f in json.loads(run.stdout or "[]")]


# (file name, bytes, 1-based line, column, end column, Python's message)
COOKIES = [
    # named cookie_*.py: `python -m` puts the folder first on sys.path, and a `base64.py` there would
    # shadow the standard module in the checker itself
    *[(f"cookie_{codec}.py", f"# -*- coding: {codec} -*-\n".encode() + KERNEL.encode(), 1, 15, 15 + len(codec),
       f"'{codec}' {NOT_TEXT}") for codec in ["rot13", "base64", "hex", "zlib", "uu", "bz2"]],
    ("unknown.py", b"#!/usr/bin/env python\n# vim: set fileencoding=klingon :\n" + KERNEL.encode(), 2, 25, 32,
     "unknown encoding: klingon"),
    ("bom_latin1.py", BOM + b"# coding: latin-1\n" + KERNEL.encode(), 1, 11, 18, "encoding problem: iso-8859-1 with BOM"),
    ("bom_rot13.py", BOM + b"# coding: rot13\n" + KERNEL.encode(), 1, 11, 16, "encoding problem: rot13 with BOM"),
    ("utf16.py", b"# coding: utf-16\n" + KERNEL.encode(), 1, 11, 17,
     "'utf-16-le' codec can't decode byte 0x0a in position 240: truncated data"),
]


@pytest.mark.parametrize("name, data, line, column, end, message", COOKIES, ids=[c[0] for c in COOKIES])
def test_a_refused_cookie_gets_pythons_message_on_the_cookie_and_the_rest_is_checked(tmp_path, name, data, line,
                                                                                    column, end, message):
    assert pythons_message(data) == message
    (tmp_path / name).write_bytes(data)
    (tmp_path / "z_kernel.py").write_text(KERNEL)
    run, found = check(tmp_path)
    assert (run.returncode, run.stderr) == (1, "")
    assert found == [(name, "PAL000", line, column, line, end, f"SyntaxError: {message}"),
                     (name, "PAL001", line + 7, 11, line + 7, 57, found[-1][-1]),  # the text below, read as UTF-8
                     ("z_kernel.py", "PAL001", 7, 11, 7, 57, found[-1][-1])]


def test_a_non_text_codec_never_decodes_the_file(tmp_path):
    """A rot13 file whose text, decoded, would hold a kernel: nothing of it is read through rot13."""
    (tmp_path / "k.py").write_bytes(b"# -*- coding: rot13 -*-\n" + codecs.encode(KERNEL, "rot13").encode())
    run, found = check(tmp_path)
    assert [f[1:4] for f in found] == [("PAL000", 1, 15)]


def test_a_codec_module_the_repository_ships_is_never_imported(tmp_path):
    (tmp_path / "encodings").mkdir()
    for where in (tmp_path / "evil.py", tmp_path / "encodings" / "evil.py"):
        where.write_text(f"open({str(tmp_path / 'RAN')!r}, 'w').close()\n")
    (tmp_path / "k.py").write_bytes(b"# coding: evil\n" + KERNEL.encode())
    run, found = check(tmp_path)
    assert [f[:7] for f in found if f[1] == "PAL000"] == [("k.py", "PAL000", 1, 11, 1, 15, "SyntaxError: unknown encoding: evil")]
    assert not (tmp_path / "RAN").exists()


def test_a_nul_byte_gets_pythons_message_where_it_is(tmp_path):
    data = KERNEL.replace("o_ref[...] = buf[...]", "o_ref[...] = buf[\x00...]").encode()
    (tmp_path / "nul.py").write_bytes(data)
    (tmp_path / "z_kernel.py").write_text(KERNEL)
    run, found = check(tmp_path)
    assert run.returncode == 1
    assert found == [
        ("nul.py", "PAL001", 7, 11, 7, 57, found[0][-1]),
        ("nul.py", "PAL000", 8, 22, 8, 23, "SyntaxError: source code cannot contain null bytes"),
        ("z_kernel.py", "PAL001", 7, 11, 7, 57, found[0][-1])]
    ran = subprocess.run([sys.executable, str(tmp_path / "nul.py")], capture_output=True, text=True)
    assert ran.stderr.endswith("SyntaxError: source code cannot contain null bytes\n")


def test_invalid_utf8_in_a_string_gets_pythons_message_at_the_string(tmp_path):
    data = KERNEL.encode() + b'NAME = "caf\xc3\xa9 \xff"\n'
    message = "(unicode error) 'utf-8' codec can't decode byte 0xff in position 6: invalid start byte"
    assert pythons_message(data) == message
    (tmp_path / "bad.py").write_bytes(data)
    (tmp_path / "z_kernel.py").write_text(KERNEL)
    run, found = check(tmp_path)
    assert found == [
        ("bad.py", "PAL001", 7, 11, 7, 57, found[0][-1]),
        ("bad.py", "PAL000", 9, 8, 9, 16, f"SyntaxError: {message}"),
        ("z_kernel.py", "PAL001", 7, 11, 7, 57, found[0][-1])]


def test_invalid_utf8_only_in_a_comment_is_read_as_python_reads_it(tmp_path):
    data = KERNEL.encode() + b"# caf\xe9\n"
    compile(data, "k.py", "exec")  # Python imports it
    (tmp_path / "k.py").write_bytes(data)
    run, found = check(tmp_path)
    assert [f[1:4] for f in found] == [("PAL001", 7, 11)]


def test_bytes_a_declared_codec_cannot_decode_are_reported_at_the_byte(tmp_path):
    data = b"# coding: ascii\n" + KERNEL.encode() + b"NAME = 'caf\xe9'\n"
    (tmp_path / "k.py").write_bytes(data)
    run, found = check(tmp_path)
    assert [f[1:] for f in found if f[1] == "PAL000"] == [("PAL000", 10, 12, 10, 13, f"SyntaxError: {pythons_message(data)}")]
    assert pythons_message(data) == "'ascii' codec can't decode byte 0xe9 in position 251: ordinal not in range(128)"


def test_a_punycode_file_too_big_to_decode_quickly_is_skipped_with_its_reason(tmp_path):
    """Python's punycode decoder is quadratic (400 KB: 84 s): a bigger file would stall the check."""
    (tmp_path / "slow.py").write_bytes(b"# coding: punycode\n" + b"x = 1\n" * (QUADRATIC_CODEC_MAX_BYTES // 6 + 1))
    (tmp_path / "small.py").write_bytes(b"# coding: punycode\nx = 1\n")
    (tmp_path / "z_kernel.py").write_text(KERNEL)
    run, found = check(tmp_path)
    assert run.stderr == ("pallas-lsp: warning: slow.py: skipped: its coding cookie names punycode, which decodes "
                          "in quadratic time: not decoded over 16,384 bytes\n")
    assert [f[:2] for f in found] == [("small.py", "PAL000"), ("z_kernel.py", "PAL001")]
    assert found[0][-1] == f"SyntaxError: {pythons_message(b'# coding: punycode' + chr(10).encode() + b'x = 1' + chr(10).encode())}"


def test_the_server_answers_and_reports_refused_files(tmp_path):
    """Open documents get the PAL000 (cookie, NUL); hover, inlay hints and code lenses answer on
    documents open and only on disk, rot13 and invalid UTF-8 alike."""
    rot13 = "# -*- coding: rot13 -*-\n" + KERNEL
    (tmp_path / "rot13.py").write_text(rot13)
    (tmp_path / "bad_utf8.py").write_bytes(KERNEL.encode() + b'NAME = "\xff"\n')
    server = WireServer(cwd=tmp_path)
    try:
        assert "result" in server.initialize(str(tmp_path), python=jax_python())
        documents = {"open_rot13.py": (rot13, (0, 14, 0, 19), f"SyntaxError: 'rot13' {NOT_TEXT}"),
                     "open_unknown.py": ("# coding: klingon\n" + KERNEL, (0, 10, 0, 17),
                                         "SyntaxError: unknown encoding: klingon"),
                     "open_nul.py": (KERNEL + "x = 1\x00\n", (8, 5, 8, 6),
                                     "SyntaxError: source code cannot contain null bytes")}
        for name, (text, (line, column, end_line, end), message) in documents.items():
            uri = f"file://{tmp_path}/{name}"
            server.open(uri, text)
            diagnostics = server.published(uri)
            assert [(d["code"], d["range"], d["message"]) for d in diagnostics if d["code"] == "PAL000"] == [(
                "PAL000", {"start": {"line": line, "character": column}, "end": {"line": end_line, "character": end}},
                message)]
            assert sorted(d["code"] for d in diagnostics) == ["PAL000", "PAL001"]
        msg_id = 10
        for name, row in [("open_rot13.py", 7), ("rot13.py", 7), ("bad_utf8.py", 6)]:
            document = {"uri": f"file://{tmp_path}/{name}"}
            hover = server.request(msg_id, "textDocument/hover",
                                   {"textDocument": document, "position": {"line": row, "character": 15}})
            assert "PAL001" in hover["result"]["contents"]["value"]
            hints = server.request(msg_id + 1, "textDocument/inlayHint", {"textDocument": document, "range": {
                "start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}})
            lenses = server.request(msg_id + 2, "textDocument/codeLens", {"textDocument": document})
            assert "error" not in hints and "error" not in lenses
            msg_id += 3
    finally:
        server.kill()
