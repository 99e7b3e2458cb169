"""Valid code gets the right answer: lines counted as Python and LSP count them (form feeds, VT,
NEL, U+2028 inside comments and strings end no line), files decoded as Python decodes them (BOM,
coding cookies), 500-term expressions, and files too large to analyse said to be skipped."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import at, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.source_text import MAX_FILE_BYTES, split_lines
from pallas_lsp.fixes import fixes_for
from pallas_lsp.fixes.edits import apply_edits

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp
    # a comment with {sep} inside
    s = "a string with {sep} inside"


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]
""")
GET_GLOBAL = "pl.get_global(plgpu.SMEM((128,), jnp.float32))"
# Every character str.splitlines() splits at but Python and LSP do not.
ODD_SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def findings_of(tmp_path, name: str, data: bytes, **kwargs):
    path = tmp_path / name
    path.write_bytes(data)
    return analyze(Project(root=str(tmp_path), python=jax_python(), **kwargs), str(path))


def spans(findings):
    return [(f.code, f"{f.span.line + 1}:{f.span.column + 1}-{f.span.end_line + 1}:{f.span.end_column + 1}")
            for f in findings]


@pytest.mark.parametrize("sep", ODD_SEPARATORS, ids=[f"U+{ord(c):04X}" for c in ODD_SEPARATORS])
def test_odd_separators_in_comments_and_strings_do_not_shift_findings(tmp_path, sep):
    text = KERNEL.format(sep=sep)
    assert at(KERNEL, GET_GLOBAL) == "9:11-9:57"
    assert spans(findings_of(tmp_path, "k.py", text.encode())) == [("PAL001", "9:11-9:57")]


@pytest.mark.parametrize("sep", ODD_SEPARATORS, ids=[f"U+{ord(c):04X}" for c in ODD_SEPARATORS])
def test_the_noqa_fix_lands_on_the_finding_line(tmp_path, sep):
    text = KERNEL.format(sep=sep)
    path = tmp_path / "k.py"
    path.write_bytes(text.encode())
    project = Project(root=str(tmp_path), python=jax_python())
    (finding,) = analyze(project, str(path))
    (noqa,) = [fix for fix in fixes_for(project, finding) if fix.kind == "noqa"]
    fixed = apply_edits(text, noqa.edits)
    assert split_lines(fixed)[8] == "    buf = " + GET_GLOBAL + "  # noqa: PAL001"
    assert fixed.replace("  # noqa: PAL001", "") == text
    assert findings_of(tmp_path, "k.py", fixed.encode()) == []


@pytest.mark.parametrize("ending", ["\r\n", "\r"], ids=["CRLF", "CR"])
def test_crlf_and_cr_files(tmp_path, ending):
    text = KERNEL.format(sep="\x0c").replace("\n", ending)
    assert spans(findings_of(tmp_path, "k.py", text.encode())) == [("PAL001", "9:11-9:57")]


def test_split_lines_is_pythons():
    assert split_lines("a\x0cb\u2028c\r\nd\re\nf") == ["a\x0cb\u2028c", "d", "e", "f"]
    assert split_lines("a\n") == ["a"] and split_lines("") == [] and split_lines("\n") == [""]


def test_a_bom_is_no_syntax_error(tmp_path):
    data = b"\xef\xbb\xbf" + KERNEL.format(sep="x").encode()
    assert spans(findings_of(tmp_path, "k.py", data)) == [("PAL001", "9:11-9:57")]


def test_a_coding_cookie_decides_the_encoding(tmp_path):
    text = "# -*- coding: latin-1 -*-\n" + KERNEL.format(sep="caf\xe9")
    assert spans(findings_of(tmp_path, "k.py", text.encode("latin-1"))) == [("PAL001", "10:11-10:57")]


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_cli_reports_the_right_line_for_odd_separators_bom_and_cookies(tmp_path):
    (tmp_path / "seps.py").write_text(KERNEL.format(sep="\u2028\x0c\x85"), encoding="utf-8")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + KERNEL.format(sep="\x0b").encode())
    run = cli("--format", "json", ".", cwd=tmp_path)
    import json

    assert [(f["path"], f["code"], f["line"], f["column"]) for f in json.loads(run.stdout)] == [
        ("bom.py", "PAL001", 9, 11), ("seps.py", "PAL001", 9, 11)]


# ---- deeply nested valid code -----------------------------------------------------------------

SUM_500 = " + ".join(["a"] * 500)
STRINGS_500 = " + ".join(['"x"'] * 500)


DEEP_KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = {kernel}


    def run(x):
        return pl.pallas_call(body, out_shape=x, interpret=True, name={name})(x)


    x = {module}
    """)


@pytest.mark.parametrize("where", ["module", "kernel", "launch"])
def test_500_term_expressions_keep_every_finding(tmp_path, where):
    """The same findings as with the expression written short (it used to raise RecursionError)."""
    short = {"module": "a", "kernel": "buf[...]", "name": '"x"'}
    deep = dict(short, **{"module": {"module": SUM_500}, "kernel": {"kernel": " + ".join(["buf[...]"] * 500)},
                          "launch": {"name": STRINGS_500}}[where])
    expected = spans(findings_of(tmp_path, "short.py", DEEP_KERNEL.format(**short).encode()))
    assert [code for code, _ in expected] == ["PAL001", "PAL002"]
    assert spans(findings_of(tmp_path, "deep.py", DEEP_KERNEL.format(**deep).encode())) == expected


def test_an_expression_too_deep_for_python_itself_costs_only_its_statement(tmp_path):
    """Python refuses 3,000 terms (RecursionError while building its tree): that statement gets a
    PAL000 on its own line, and the rest of the file is still analysed."""
    text = KERNEL.format(sep="x") + "\nx = " + " + ".join(["1"] * 3000) + "\n"
    assert spans(findings_of(tmp_path, "k.py", text.encode())) == [("PAL001", "9:11-9:57"), ("PAL000", "12:1-12:12002")]


# ---- files the analysis does not read ------------------------------------------------------------


def test_a_file_over_the_size_limit_is_said_to_be_skipped(tmp_path):
    (tmp_path / "ok.py").write_text(KERNEL.format(sep="x"))
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    run = cli(".", cwd=tmp_path)
    size = (tmp_path / "big.py").stat().st_size
    assert run.stderr == f"pallas-lsp: warning: big.py: skipped: {size:,} bytes, over the 5 MB limit for analysed files\n"
    assert run.stdout.splitlines()[-1] == "Found 1 error."
    (tmp_path / "ok.py").unlink()
    run = cli(".", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "All checks passed! (0 files checked, 1 skipped (see above))\n")
