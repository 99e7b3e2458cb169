"""Whole-file suppression, as ruff users know it: `# pallas-lsp: noqa` (every rule) or
`# pallas-lsp: noqa: PAL001` on a line of its own, and `per-file-ignores` in `[tool.pallas-lsp]`
(glob patterns from the pyproject.toml's folder). In `check`, in the language server, and after
edits that the server re-checks incrementally."""

import json
import subprocess
import sys
import textwrap

import pytest

from lsp_wire import WireServer
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze, analyze_incremental

TWO = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def buffer_body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]


    def interpreted_body(o_ref):
        sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)


    interpreted = plgpu.kernel(interpreted_body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32), interpret=True)
""")


def check(folder, jax_env, *args):
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", jax_env, *args],
                         capture_output=True, text=True, cwd=folder, timeout=300)
    found = json.loads(run.stdout) if run.stdout else None
    return run.returncode, sorted((f["path"], f["code"]) for f in found or []), run.stderr


def with_line(line: str, where: int = 5) -> str:
    lines = TWO.splitlines(keepends=True)
    return "".join([*lines[:where], line + "\n", *lines[where:]])


def test_without_suppression_both_rules_report(tmp_path, jax_env):
    (tmp_path / "k.py").write_text(TWO)
    assert check(tmp_path, jax_env, "k.py")[:2] == (1, [("k.py", "PAL001"), ("k.py", "PAL002")])


@pytest.mark.parametrize("comment,left", [
    ("# pallas-lsp: noqa", []),
    ("# pallas-lsp: noqa: PAL001", ["PAL002"]),
    ("  #pallas-lsp:noqa:PAL001,PAL002", []),
    ("# pallas-lsp: noqa: PAL00", []),  # a prefix, as in select/ignore
    ("# PALLAS-LSP: NOQA: pal002", ["PAL001"]),
])
def test_a_file_level_noqa_line_silences_the_file(tmp_path, jax_env, comment, left):
    (tmp_path / "k.py").write_text(with_line(comment))
    assert check(tmp_path, jax_env, "k.py")[:2] == (1 if left else 0, [("k.py", code) for code in left])


@pytest.mark.parametrize("text", [
    with_line("import os  # pallas-lsp: noqa"),  # trailing code: not a line of its own
    with_line('NOTE = """\n# pallas-lsp: noqa\n"""'),  # inside a string: no comment
    with_line("# pallas-lsp: noqa these kernels are fine"),  # not the form: said nothing about codes
])
def test_what_is_no_file_level_noqa(tmp_path, jax_env, text):
    (tmp_path / "k.py").write_text(text)
    assert check(tmp_path, jax_env, "k.py")[:2] == (1, [("k.py", "PAL001"), ("k.py", "PAL002")])


def test_per_file_ignores_by_pattern(tmp_path, jax_env):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.pallas-lsp.per-file-ignores]
        "tests/*.py" = ["PAL001"]
        "legacy_*.py" = ["PAL"]
        "generated" = ["PAL002"]
        "!src/**" = ["PAL002"]
    """))
    for name in ("tests/test_k.py", "tests/deeper/k.py", "src/legacy_k.py", "src/k.py", "src/generated/k.py",
                 "k.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(TWO)
    status, found, _ = check(tmp_path, jax_env)
    # k.py, tests/: "!src/**" ignores PAL002 outside src/; tests/test_k.py: "tests/*.py" ignores PAL001
    # (not in tests/deeper/: * stops at /); src/legacy_k.py: every PAL rule; src/generated/: the folder's name.
    assert status == 1
    assert found == [("k.py", "PAL001"), ("src/generated/k.py", "PAL001"), ("src/k.py", "PAL001"),
                     ("src/k.py", "PAL002"), ("tests/deeper/k.py", "PAL001")]


@pytest.mark.parametrize("table,message", [
    ('per-file-ignores = { "tests/*.py" = ["PAL9"] }', "per-file-ignores 'tests/*.py': unknown rule code PAL9"),
    ('per-file-ignores = ["tests/*.py"]', "per-file-ignores must be a table of glob patterns and rule codes"),
    ('per-file-ignores = { "tests/*.py" = 1 }', "per-file-ignores 'tests/*.py' must be a list of rule codes"),
])
def test_bad_per_file_ignores_are_a_usage_error(tmp_path, jax_env, table, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.pallas-lsp]\n{table}\n")
    (tmp_path / "k.py").write_text(TWO)
    status, found, stderr = check(tmp_path, jax_env)
    assert status == 2 and message in stderr, stderr


def test_removing_the_file_level_noqa_brings_the_findings_back_in_an_incremental_recheck(tmp_path, jax_env):
    path = tmp_path / "k.py"
    path.write_text(TWO)
    project = Project(root=str(tmp_path), python=jax_env)
    silenced = with_line("# pallas-lsp: noqa: PAL002")
    first = analyze_incremental(project, str(path), silenced, min_lines=1)
    assert [f.code for f in first] == ["PAL001"]
    again = analyze_incremental(project, str(path), silenced.replace("# pallas-lsp: noqa: PAL002", "# a comment"),
                                min_lines=1)
    assert [f.code for f in again] == ["PAL001", "PAL002"]
    back = analyze_incremental(project, str(path), silenced, min_lines=1)
    assert [f.code for f in back] == ["PAL001"]
    assert [f.code for f in analyze(project, str(path), silenced)] == ["PAL001"]


def test_the_language_server_applies_both(tmp_path, jax_env):
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\nper-file-ignores = { "tests/*.py" = ["PAL001"] }\n')
    (tmp_path / "tests").mkdir()
    server = WireServer(cwd=str(tmp_path))
    try:
        server.initialize(str(tmp_path), python=jax_env)
        in_tests = (tmp_path / "tests" / "test_k.py").as_uri()
        server.open(in_tests, TWO)
        assert [d["code"] for d in server.published(in_tests)] == ["PAL002"]
        noqa = (tmp_path / "k.py").as_uri()
        server.open(noqa, with_line("# pallas-lsp: noqa: PAL001"))
        assert [d["code"] for d in server.published(noqa)] == ["PAL002"]
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": noqa, "version": 2}, "contentChanges": [{"text": TWO}]}})
        assert [d["code"] for d in server.published(noqa, version=2)] == ["PAL001", "PAL002"]
    finally:
        server.kill()
