"""Nesting deeper than Python's parser allows costs that statement only: the block indented past
CPython's 100 levels (101 nested `def`s, classes, `if`s, `with`s) and expressions too deep for the
parser (5,000 `lambda`s or `not`s) get one PAL000, and a kernel below still gets its PAL001 at
its exact position, in the CLI and over a real server (before: the recovery cut the rest of the
module, and the kernel's PAL001 was lost)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap

import pytest
from conftest import jax_python, run_with_peak
from lsp_wire import WireServer
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

HEADER = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


""")
KERNEL = textwrap.dedent("""\


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]
""")
HEADERS = {"def": "def f{i}():", "async def": "async def f{i}():", "class": "class C{i}:", "if": "if x:",
           "with": "with x:"}
TOO_DEEP = "SyntaxError: too many levels of indentation"
PAL001 = ('JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"; allocate it '
          "as scratch. Use scratch_shapes for pallas_call, scratch_types for plgpu.kernel and pl.kernel, or pl.run_scoped; "
          "get_global only allocates plgpu.SemaphoreType.REGULAR semaphores")
FIRST_NESTED_LINE = HEADER.count("\n")  # 0-based


def nested(kind: str, depth: int) -> str:
    """`depth` nested blocks, one space of indentation each (1,000 of them: 0.5 MB)."""
    return "".join(" " * i + HEADERS[kind].format(i=i) + "\n" for i in range(depth)) + " " * depth + "pass\n"


def module(middle: str) -> str:
    return HEADER + middle + KERNEL


def kernel_line(text: str) -> int:
    return text.count("\n") - 2  # 0-based: `buf = ...` is the last line but one


def findings(tmp_path, text: str):
    path = tmp_path / "deep.py"
    path.write_text(text)
    return [(f.code, (f.span.line, f.span.column, f.span.end_line, f.span.end_column), f.message)
            for f in analyze(Project(root=str(tmp_path), python=jax_python()), str(path))]


@pytest.mark.parametrize("depth", [101, 200, 1000])
@pytest.mark.parametrize("kind", list(HEADERS))
def test_blocks_nested_past_pythons_limit_cost_only_that_block(tmp_path, kind, depth):
    text = module(nested(kind, depth))
    too_deep = FIRST_NESTED_LINE + 100  # the first line indented 100 levels: Python's error is there
    assert findings(tmp_path, text) == [
        ("PAL000", (too_deep, 0, too_deep, 100 + len(HEADERS[kind].format(i=100))), TOO_DEEP),
        ("PAL001", (kernel_line(text), 10, kernel_line(text), 56), PAL001)]


def test_99_levels_are_valid_python_and_get_no_pal000(tmp_path):
    text = module(nested("def", 99))
    compile(text, "deep.py", "exec")
    assert findings(tmp_path, text) == [("PAL001", (kernel_line(text), 10, kernel_line(text), 56), PAL001)]


def test_a_deep_block_between_two_functions_loses_neither(tmp_path):
    """Only the statement that holds the too-deep block is replaced: its siblings stay."""
    deep = "def outer():\n    x = 1\n" + textwrap.indent(nested("if", 120), "    ") + "    y = 2\n"
    text = module(KERNEL.replace("body", "first") + deep)
    first = HEADER.count("\n") + 3
    assert [(code, span[0]) for code, span, _ in findings(tmp_path, text)] == [
        ("PAL001", first), ("PAL000", text.split("\n").index(" " * 103 + "if x:")), ("PAL001", kernel_line(text))]


@pytest.mark.parametrize("expression", ["lambda: " * 5000 + "1", "not " * 5000 + "1", "-" * 5000 + "1",
                                        "a" + ".b" * 5000, "(" * 1000 + "1" + ")" * 1000],
                         ids=["5000 lambdas", "5000 nots", "5000 minus signs", "5000 attributes", "1000 parentheses"])
def test_expressions_too_deep_for_the_parser_cost_only_their_statement(tmp_path, expression):
    text = module(f"x = {expression}\n")
    line = FIRST_NESTED_LINE
    (pal000, pal001) = findings(tmp_path, text)
    assert pal000[0] == "PAL000" and pal000[1][0] == pal000[1][2] == line
    assert pal001 == ("PAL001", (kernel_line(text), 10, kernel_line(text), 56), PAL001)
    try:  # the message is Python's parser's own
        ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        assert str(getattr(exc, "msg", None) or exc) in pal000[2]


def test_a_long_line_too_deep_for_the_parser_costs_memory_in_proportion_to_it(tmp_path):
    """Finding the too-deep statement tokenizes the module; tokenize's tokens each hold a copy of their
    line, so kept they took the line's length times its tokens (30,000 minus signs: 0.9 GB; 100,000: 9.8 GB)."""
    text = module("x = " + "-" * 30_000 + "1\n")
    (tmp_path / "deep.py").write_text(text)
    code, stdout, stderr, peak_mib = run_with_peak(
        [sys.executable, "-m", "pallas_lsp", "check", "--no-jedi", "--format", "json", "deep.py"], tmp_path)
    assert code == 1, stderr[-3000:]
    assert [(f["code"], f["line"]) for f in json.loads(stdout)] == [
        ("PAL000", FIRST_NESTED_LINE + 1), ("PAL001", kernel_line(text) + 1)]
    assert peak_mib < 300, f"check peaked at {peak_mib:.0f} MiB"


def test_1000_nested_lambdas_are_valid_python_and_analysed(tmp_path):
    text = module("x = " + "lambda: " * 1000 + "1\n")
    compile(text, "deep.py", "exec")
    assert findings(tmp_path, text) == [("PAL001", (kernel_line(text), 10, kernel_line(text), 56), PAL001)]


def test_cli_reports_the_deep_block_and_the_kernel_and_skips_5000_levels_with_a_reason(tmp_path):
    """5,000 nested blocks take 12.5 MB of indentation even at one space a level: over the 5 MB
    limit for analysed files, so that file is skipped with a reason and the others checked."""
    deep = module(nested("def", 1000))
    (tmp_path / "deep.py").write_text(deep)
    (tmp_path / "deeper.py").write_text(module(nested("def", 5000)))
    size = (tmp_path / "deeper.py").stat().st_size
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--no-jedi", "--format", "json", "."],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert run.stderr == f"pallas-lsp: warning: deeper.py: skipped: {size:,} bytes, over the 5 MB limit for analysed files\n"
    assert [(f["path"], f["code"], f["line"], f["column"], f["message"]) for f in json.loads(run.stdout)] == [
        ("deep.py", "PAL000", FIRST_NESTED_LINE + 101, 1, TOO_DEEP),
        ("deep.py", "PAL001", kernel_line(deep) + 1, 11, PAL001)]
    assert run.returncode == 1


@pytest.mark.slow
def test_the_server_answers_on_deeply_nested_documents(tmp_path):
    """Diagnostics, hover, inlay hints and code lenses on an open document and on one only on disk."""
    text = module(nested("def", 2000))  # over 1,500 lines: the server's incremental analysis takes it
    (tmp_path / "on_disk.py").write_text(text)
    server = WireServer(cwd=tmp_path)
    try:
        assert "result" in server.initialize(str(tmp_path), python=jax_python())
        uri = f"file://{tmp_path}/open.py"
        server.open(uri, text)
        line = kernel_line(text)
        assert [(d["code"], d["range"], d["message"]) for d in server.published(uri)] == [
            ("PAL000", {"start": {"line": FIRST_NESTED_LINE + 100, "character": 0},
                        "end": {"line": FIRST_NESTED_LINE + 100, "character": 111}}, TOO_DEEP),
            ("PAL001", {"start": {"line": line, "character": 10}, "end": {"line": line, "character": 56}},
             PAL001)]
        # an edit below the deep block: the incremental analysis keeps both findings, the kernel's moved
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {
                "start": {"line": line - 1, "character": 0}, "end": {"line": line - 1, "character": 0}},
                "text": "    pass\n"}]}})
        assert [(d["code"], d["range"]["start"]) for d in server.published(uri, 2)] == [
            ("PAL000", {"line": FIRST_NESTED_LINE + 100, "character": 0}),
            ("PAL001", {"line": line + 1, "character": 10})]
        for msg_id, name in enumerate(["open.py", "on_disk.py"], 1):
            document = {"uri": f"file://{tmp_path}/{name}"}
            row = line + 1 if name == "open.py" else line
            hover = server.request(msg_id * 10, "textDocument/hover",
                                   {"textDocument": document, "position": {"line": row, "character": 15}})
            assert "PAL001" in hover["result"]["contents"]["value"]
            hints = server.request(msg_id * 10 + 1, "textDocument/inlayHint", {"textDocument": document, "range": {
                "start": {"line": 0, "character": 0}, "end": {"line": row + 2, "character": 0}}})
            lenses = server.request(msg_id * 10 + 2, "textDocument/codeLens", {"textDocument": document})
            assert "error" not in hints and "error" not in lenses
    finally:
        server.kill()
