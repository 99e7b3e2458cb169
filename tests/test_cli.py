"""`pallas-lsp check`: the output formats, exit statuses and settings other tools rely on."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, at

BAD = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = buf[...]
""")
GOOD = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n" \
       "def body():\n    pl.get_global(plgpu.SemaphoreType.REGULAR)\n"
MESSAGE = ('JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"; allocate it '
           "as scratch. Use scratch_shapes for pallas_call, scratch_types for plgpu.kernel and pl.kernel, or pl.run_scoped; "
           "get_global only allocates plgpu.SemaphoreType.REGULAR semaphores")


def cli(*args, cwd, workers: int | None = None):
    """`pallas-lsp ARGS`; `workers`: the worker processes `check` starts beside itself (else it
    chooses from its work and the CPUs free, as a user's check does)."""
    env = {**os.environ, "PALLAS_LSP_CHECK_WORKERS": str(workers)} if workers is not None else None
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env=env)


@pytest.fixture
def project(tmp_path, jax_env):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    (tmp_path / "pkg" / "good.py").write_text(GOOD)
    (tmp_path / "notes.txt").write_text("not python")
    return tmp_path


def test_json_format(project, jax_env):
    run = cli("check", "--format", "json", "--python", jax_env, "pkg", cwd=project)
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout) == [{
        "path": "pkg/bad.py", "line": 7, "column": 11, "end_line": 7, "end_column": 57,
        "code": "PAL001", "severity": "error", "message": MESSAGE, "source": "pallas-lsp"}]
    assert at(BAD, "pl.get_global(plgpu.SMEM((128,), jnp.float32))") == "7:11-7:57"


def test_text_format_looks_like_ruff(project, jax_env):
    run = cli("check", "--python", jax_env, "pkg", cwd=project)
    assert (run.returncode, run.stdout) == (1, f"pkg/bad.py:7:11: PAL001 {MESSAGE}\nFound 1 error.\n")


def test_clean_files_exit_zero(project, jax_env):
    run = cli("check", "--python", jax_env, "pkg/good.py", cwd=project)
    assert (run.returncode, run.stdout) == (0, "All checks passed! (1 file checked)\n")
    run = cli("check", "--format", "json", "--python", jax_env, "pkg/good.py", cwd=project)
    assert (run.returncode, json.loads(run.stdout)) == (0, [])


README_RULES = re.findall(r"^\| \[(PAL\d{3})\]", (REPO / "README.md").read_text(), re.MULTILINE)


def test_sarif_format(project, jax_env):
    run = cli("check", "--format", "sarif", "--python", jax_env, "pkg", cwd=project)
    assert run.returncode == 1
    sarif = json.loads(run.stdout)
    assert sarif["version"] == "2.1.0"
    (sarif_run,) = sarif["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(README_RULES)  # every rule the README lists, in code order
    (result,) = sarif_run["results"]
    assert result == {
        "ruleId": "PAL001", "ruleIndex": 1, "level": "error", "message": {"text": MESSAGE},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "pkg/bad.py", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 7, "startColumn": 11, "endLine": 7, "endColumn": 57}}}]}


def test_select_and_ignore_flags(project, jax_env):
    assert cli("check", "--ignore", "PAL001", "--python", jax_env, "pkg", cwd=project).returncode == 0
    assert cli("check", "--select", "PAL002", "--python", jax_env, "pkg", cwd=project).returncode == 0
    assert cli("check", "--select", "PAL", "--python", jax_env, "pkg", cwd=project).returncode == 1


def test_pyproject_settings_and_flag_precedence(project, jax_env):
    (project / "pyproject.toml").write_text(f'[tool.pallas-lsp]\nignore = ["PAL001"]\npython = "{jax_env}"\n')
    assert cli("check", "pkg", cwd=project).returncode == 0
    run = cli("check", "--ignore", "", "--format", "json", "pkg", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["PAL001"]


def test_broken_pyproject_is_a_usage_error(project):
    (project / "pyproject.toml").write_text("[tool.pallas-lsp]\nselect = 3\n")
    run = cli("check", "pkg", cwd=project)
    assert run.returncode == 2
    assert "[tool.pallas-lsp] select must be a list of rule codes" in run.stderr


def test_usage_errors_exit_two(project):
    assert cli("check", "--format", "xml", "pkg", cwd=project).returncode == 2
    missing = cli("check", "missing.py", cwd=project)
    assert (missing.returncode, missing.stderr) == (2, "pallas-lsp: error: no such file or folder: missing.py\n")
    broken = cli("check", "--python", str(project / "nope" / "python"), "pkg", cwd=project)
    assert broken.returncode == 2
    assert "Python environment not found" in broken.stderr


def test_unparsable_file_is_reported_and_the_rest_analysed(project, jax_env):
    (project / "pkg" / "bad.py").write_text(BAD + "\ndef broken(:\n    pass\n")
    run = cli("check", "--format", "json", "--python", jax_env, "pkg/bad.py", cwd=project)
    assert run.returncode == 1
    assert [(f["code"], f["line"], f["column"]) for f in json.loads(run.stdout)] == [("PAL001", 7, 11), ("PAL000", 10, 12)]


def test_binary_and_non_utf8_files_do_not_crash(project, jax_env):
    (project / "pkg" / "blob.py").write_bytes(b"\x00\xff\xfe garbage \x80\n" + BAD.encode())
    run = cli("check", "--format", "json", "--python", jax_env, "pkg/blob.py", cwd=project)
    assert run.returncode == 1
    assert [f["code"] for f in json.loads(run.stdout)][:1] == ["PAL000"]


STAR = ("from jax.experimental.pallas import *\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
        "def body():\n    get_global(plgpu.SemaphoreType.BARRIER)\n")


def test_environment_defaults_to_virtual_env(tmp_path, jax_env):
    """Only jedi, looking into an environment that has jax, can resolve a star import."""
    import os

    (tmp_path / "star.py").write_text(STAR)
    venv = os.path.dirname(os.path.dirname(jax_env))
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    with_venv = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "star.py"],
                               capture_output=True, text=True, cwd=tmp_path, env={**env, "VIRTUAL_ENV": venv})
    without = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "star.py"],
                             capture_output=True, text=True, cwd=tmp_path, env=env)
    assert [(f["code"], f["line"]) for f in json.loads(with_venv.stdout)] == [("PAL001", 5)]
    assert (without.returncode, json.loads(without.stdout)) == (0, [])


def test_parallel_check_prints_what_one_process_prints(tmp_path, jax_env):
    """Worker processes over files: the same findings, in the same order, with the same exit status."""
    (tmp_path / "pyproject.toml").write_text(f'[tool.pallas-lsp]\npython = "{jax_env}"\n')
    for index in range(4):
        (tmp_path / f"kernel_{index}.py").write_text(BAD if index % 2 else GOOD)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n")
    for index in range(250):  # enough files that cannot matter for workers of their own
        (tmp_path / "pkg" / f"plain_{index:03}.py").write_text(f"import os\nVALUE = {index}\n")
    runs = {jobs: cli("check", "--format", "json", "--jobs", jobs, ".", cwd=tmp_path, workers=2) for jobs in ("1", "3")}
    one, many = runs["1"], runs["3"]
    assert (many.returncode, many.stdout) == (one.returncode, one.stdout)
    assert [(f["path"], f["code"]) for f in json.loads(one.stdout)] == [
        ("kernel_1.py", "PAL001"), ("kernel_3.py", "PAL001"), ("pkg/broken.py", "PAL000")]
    assert cli("check", "--jobs", "0", ".", cwd=tmp_path).stderr.endswith(
        "pallas-lsp: error: argument -j/--jobs: must be a whole number of processes, 1 or more: '0'\n")


def test_jobs_are_capped_at_the_cpus_available_with_a_warning(tmp_path, jax_env):
    """As ruff: `-j 100000` starts no more worker processes than there are CPUs (each has its own
    interpreter for jedi), says so, and prints what one process prints."""
    cpus = len(os.sched_getaffinity(0))
    (tmp_path / "pyproject.toml").write_text(f'[tool.pallas-lsp]\npython = "{jax_env}"\n')
    for index in range(4 * cpus + 4):  # files that can matter: enough for more workers than CPUs
        (tmp_path / f"kernel_{index:02}.py").write_text(BAD if index % 2 else GOOD)
    one = cli("check", "--jobs", "1", ".", cwd=tmp_path)
    many = cli("check", "--verbose", "-j", "100000", ".", cwd=tmp_path, workers=1024)
    assert (many.returncode, many.stdout) == (one.returncode, one.stdout) == (1, one.stdout)
    assert one.stdout.count(" PAL001 ") == 2 * cpus + 2
    assert (f"pallas-lsp: warning: --jobs 100000 is more than the {cpus} CPUs available: "
            f"at most {cpus} processes\n") in many.stderr
    started = [line for line in many.stderr.splitlines() if "worker processes started" in line]
    assert started == ([f"pallas-lsp: debug: {cpus - 1} worker processes started for {4 * cpus + 4} files "
                        f"({4 * cpus + 4} that can matter)"] if cpus > 1 else [])  # and the parent


def test_parallel_check_keeps_the_import_answers_one_process_keeps(tmp_path, jax_env):
    """Workers hand the import answers they learn to the parent, which writes them: the next run
    (a server, another check) finds on disk what a one-process check would have left there."""
    for index in range(8):
        (tmp_path / f"kernel_{index}.py").write_text(BAD if index % 2 else GOOD)
    kept = {}
    for jobs in ("1", "3"):
        cache = tmp_path.parent / f"{tmp_path.name}-cache-{jobs}"
        run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_env, "--jobs", jobs, "."],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300,
                             env={**os.environ, "PALLAS_LSP_CACHE_DIR": str(cache), "PALLAS_LSP_CHECK_WORKERS": "2"})
        assert run.returncode == 1, run.stderr
        (answers,) = cache.glob("jedi-imports-*.json")
        kept[jobs] = json.loads(answers.read_text())["data"]
    assert kept["1"] and kept["3"] == kept["1"]
