"""`pallas-lsp trace` against real JAX 0.12 on the CPU: resources, located failures, warm workers."""

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, jax_python
from pallas_lsp.trace import trace_target
from pallas_lsp.trace.report import format_text
from pallas_lsp.trace.worker import WorkerPool

pytestmark = pytest.mark.jax

TRACE = FIXTURES / "trace"
AGREEMENT = FIXTURES / "agreement"
EXPECTED = json.loads((AGREEMENT / "EXPECTED_JAX.json").read_text())


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool()
    yield pool
    pool.shutdown()


def trace(pool, name, function, **kw):
    path = TRACE / name
    return trace_target(pool, jax_python(), str(TRACE), str(path), function, **kw)


def test_good_kernel_reports_jax_resource_estimate_matching_the_hand_computed_scratch(pool):
    result = trace(pool, "kernels.py", "add_one")
    assert result["ok"], result["error"]
    assert (result["stage"], result["platform"], result["lowering_platform"]) == ("done", "cuda", "cuda")
    assert result["args"] == ["f32[128]"] and result["args_source"] == "comment on line 18"
    assert (result["compiled"], result["compile_skipped"]) == (False, "no local cuda device")
    (kernel,) = result["kernels"]
    # Scratch: SMEM((128, 128), float32) = 65,536 bytes; SMEM((256,), bfloat16) = 512 bytes, and
    # Mosaic GPU rounds every allocation up to SMEM_ALIGNMENT = 1,024 bytes: 65,536 + 1,024.
    assert kernel["smem_bytes"] == 128 * 128 * 4 + 1024 == 66560
    assert (kernel["name"], kernel["barriers"], kernel["gmem_semaphores"], kernel["tmem_cols"]) == ("add_one", 1, 1, 0)
    assert kernel["barrier_kinds"] == [
        {"kind": "Barrier(arrival_count=1, num_barriers=1, orders_tensor_core=False)", "count": 1}]
    assert kernel["location"]["path"] == str(TRACE / "kernels.py") and kernel["location"]["line"] == 26
    assert result["jax"] == "0.12.0.1" and result["jaxlib"] == "0.12.0.1"
    assert set(result["timings"]) >= {"import", "resolve", "trace", "lower", "total", "wall"}


def test_arguments_from_annotations_and_from_a_call(pool):
    scaled = trace(pool, "kernels.py", "scaled")
    assert (scaled["ok"], scaled["args"], scaled["args_source"]) == (True, ["f32[128]"], "annotations")
    twice = trace(pool, "kernels.py", "twice")
    assert (twice["ok"], twice["args"], twice["args_source"]) == (True, ["f32[128]", "f32[128]"], "call on line 41")
    assert [k["smem_bytes"] for k in twice["kernels"]] == [66560]


def test_pal001_kernel_fails_with_jax_message_on_the_get_global_line(pool):
    result = trace(pool, "bad_kernels.py", "smem_global")
    assert not result["ok"]
    error = result["error"]
    assert (error["type"], error["stage"]) == ("NotImplementedError", "lower")
    assert error["message"] == "get_global only supports semaphores, got Ref<smem>{float32[128]}"
    assert [(loc["path"], loc["line"], loc["why"]) for loc in error["locations"]] == [
        (str(TRACE / "bad_kernels.py"), 19, "get_global(Ref<smem>{float32[128]})")]


def test_interpreted_kernel_fails_with_no_ir_type_handler_on_the_get_global_line(pool):
    result = trace(pool, "bad_kernels.py", "interpreted", platform="host")
    error = result["error"]
    assert (result["ok"], result["lowering_platform"], error["type"]) == (False, "cpu", "TypeError")
    assert error["message"] == "No ir_type_handler for aval type: <class 'jax._src.state.types.AbstractRef'>"
    assert [(Path(loc["path"]).name, loc["line"]) for loc in error["locations"]] == [("bad_kernels.py", 26)]


def test_bare_pallas_call_cross_lowers_for_triton_as_an_abstract_h200_without_a_gpu(pool):
    result = trace(pool, "triton_kernels.py", "add_one", args="f32[128]")
    assert (result["ok"], result["stage"], result["lowering_platform"]) == (True, "done", "cuda"), result["error"]
    assert result["abstract_device"] == "NVIDIA H200"
    assert "lowered for cuda (as an abstract NVIDIA H200: no GPU here)" in format_text(result)


def test_host_platform_compiles_on_the_cpu(pool):
    result = trace(pool, "misbehaving.py", "reads_stdin", platform="host")
    assert (result["ok"], result["compiled"], result["lowering_platform"]) == (True, True, "cpu")


# ---- every failing agreement fixture, traced -----------------------------------------------------

WRAPPER = """
import importlib
import sys

import jax.numpy as jnp

sys.path.insert(0, {folder!r})
_fixture = importlib.import_module({module!r})
_fn, _args, _mode = _fixture.target()


def entry():
    return _fn(*[jnp.zeros(a.shape, a.dtype) for a in _args])
"""


def _target_mode(name: str) -> str | None:
    """The mode a fixture's `target()` returns (its last element), read from its source: older
    records of EXPECTED_JAX.json carry no mode."""
    tree = ast.parse((REPO / name).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "target":
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple) \
                        and isinstance(ret.value.elts[-1], ast.Constant):
                    return ret.value.elts[-1].value
    return None


# `trace` lowers for a GPU or the host; TPU fixtures are lowered by the agreement test only. An error
# JAX raises only while the kernel runs (JaxRuntimeError from the TPU interpreter's host callbacks,
# PAL011) is out of reach of a trace, which lowers and never runs the kernel on the host.
BAD = sorted(name for name, truth in EXPECTED.items()
             if not truth["ok"] and (truth.get("mode") or _target_mode(name)) != "tpu"
             and truth["exc_type"] != "JaxRuntimeError")


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wrappers")
    for name in BAD:
        stem = Path(name).stem
        (folder / f"trace_{stem}.py").write_text(WRAPPER.format(folder=str(AGREEMENT), module=stem))
    return folder


def _relative(path: str) -> str:
    """The path inside the agreement folder (EXPECTED_JAX.json was recorded in another checkout)."""
    parts = Path(path).parts
    if "agreement" in parts:
        return "/".join(parts[len(parts) - parts[::-1].index("agreement"):])
    return os.path.relpath(path, AGREEMENT)


@pytest.mark.parametrize("name", BAD, ids=[Path(n).stem for n in BAD])
def test_agreement_fixture_fails_in_the_trace_exactly_as_jax_says(pool, wrappers, name):
    truth = EXPECTED[name]
    stem = Path(name).stem
    interpret = "No ir_type_handler" in truth["message"] or _target_mode(name) == "interpret"
    result = trace_target(pool, jax_python(), str(AGREEMENT), str(wrappers / f"trace_{stem}.py"), "entry",
                          platform="host" if interpret else "cuda")
    error = result["error"]
    assert (result["ok"], error["type"], _no_address(error["message"])) == (
        False, truth["exc_type"], _no_address(truth["message"]))
    expected = sorted((_relative(loc["path"]), loc["line"]) for loc in truth["locations"])
    assert sorted((_relative(loc["path"]), loc["line"]) for loc in error["locations"]) == expected


def _no_address(message: str) -> str:
    """JAX prints the effect object itself ('<...SemaphoreEffect object at 0x7f..>'): its address varies; and a
    set of types ('Must signal semaphores of the following types: {...}') in no fixed order."""
    message = re.sub(r" at 0x[0-9a-f]+>", ">", message)
    return re.sub(r"\{(<class [^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def test_pal001_fixtures_are_all_covered():
    assert sum("get_global only supports" in (EXPECTED[n]["message"] or "") for n in BAD) == 29
    assert sum("No ir_type_handler" in (EXPECTED[n]["message"] or "") for n in BAD) == 14


# ---- the warm worker ----------------------------------------------------------------------------

def test_second_trace_reuses_the_warm_worker_and_skips_the_jax_import(tmp_path):
    pool = WorkerPool()
    try:
        first_start = time.perf_counter()
        first = trace(pool, "kernels.py", "add_one")
        first_wall = time.perf_counter() - first_start
        second_start = time.perf_counter()
        second = trace(pool, "kernels.py", "add_one")
        second_wall = time.perf_counter() - second_start
    finally:
        pool.shutdown()
    assert first["worker"]["cold"] and not second["worker"]["cold"]
    assert first["worker"]["warm_pid"] == second["worker"]["warm_pid"]
    assert first["worker"]["pid"] != second["worker"]["pid"]  # each trace in a fresh fork of the warm worker
    assert second["worker"]["trace_number"] == 2
    import_seconds = first["worker"]["jax_import_seconds"]
    assert import_seconds > 0 and second["worker"]["jax_import_seconds"] == 0
    # Measured: the whole second trace takes less time than importing jax alone did.
    assert second_wall < import_seconds < first_wall, (first_wall, import_seconds, second_wall)
    assert second["kernels"] == first["kernels"]  # caches cleared: the estimator ran again


def test_a_changed_file_is_imported_afresh_by_the_same_warm_worker(tmp_path):
    kernel = tmp_path / "kern.py"
    helper = tmp_path / "helper.py"
    helper.write_text("SCALE = 2.0\n")
    kernel.write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from helper import SCALE

        # pallas-lsp: trace(f32[4])
        def f(x):
            return jnp.sin(x) * SCALE
    """))
    pool = WorkerPool()
    try:
        first = trace_target(pool, jax_python(), str(tmp_path), str(kernel), "f", platform="host")
        again = trace_target(pool, jax_python(), str(tmp_path), str(kernel), "f", platform="host")
        time.sleep(0.01)
        helper.write_text("SCALE = 'three'  # changed\n")
        changed = trace_target(pool, jax_python(), str(tmp_path), str(kernel), "f", platform="host")
    finally:
        pool.shutdown()
    assert first["ok"] and again["ok"]
    assert set(first["files"]) == {str(kernel), str(helper)}
    assert (changed["ok"], changed["error"]["type"]) == (False, "TypeError")  # the new SCALE, not the cached one
    assert not again["worker"]["cold"] and not changed["worker"]["cold"]
    assert again["worker"]["warm_pid"] == changed["worker"]["warm_pid"] == first["worker"]["warm_pid"]
    assert changed["worker"]["restarted_because"] is None



def test_the_runners_own_modules_are_never_the_users(pool, tmp_path):
    """The runner loads its modules (tracing.py, containment.py) by path under private names: a
    workspace's own modules of those names are what its code imports, and with the runner's folder
    inside the workspace (this repository as the root) none of its files is listed as the user's."""
    for name in ("runner", "tracing", "containment", "launches"):
        (tmp_path / f"{name}.py").write_text(f"WHO = 'the workspace {name}'\n")
    kernel = tmp_path / "kern.py"
    kernel.write_text(textwrap.dedent("""
        import containment, launches, runner, tracing

        # pallas-lsp: trace(f32[4])
        def f(x):
            return x + len(containment.WHO + launches.WHO + runner.WHO + tracing.WHO)
    """))
    result = trace_target(pool, jax_python(), str(REPO), str(kernel), "f", platform="host")
    assert result["ok"], result["error"]
    workspace = {str(tmp_path / f"{name}.py") for name in ("runner", "tracing", "containment", "launches")}
    assert set(result["files"]) == {str(kernel), *workspace}


# ---- the command line -----------------------------------------------------------------------------

def cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", *args, "--python", jax_python()],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_cli_text_output_and_exit_status():
    good = cli("tests/fixtures/trace/kernels.py::add_one")
    assert good.returncode == 0, good.stderr
    lines = good.stdout.splitlines()
    assert lines[0] == "trace tests/fixtures/trace/kernels.py::add_one(f32[128])  [arguments from comment on line 18]"
    assert lines[1] == "platform cuda: the kernel is compiled for a GPU (cross-lowered where there is none)"
    assert lines[2] == ("jax 0.12.0.1 (jaxlib 0.12.0.1), Python 3.12." + lines[2].split("Python 3.12.")[1])
    assert lines[2].endswith("; lowered for cuda, not compiled (no local cuda device)")
    assert lines[3].startswith("timings: worker start ")
    assert lines[4:] == ["kernel add_one (tests/fixtures/trace/kernels.py:19): shared memory 66,560 bytes, "
                         "1 barrier, 0 TMEM columns, 1 global semaphore", "OK"]

    bad = cli("tests/fixtures/trace/bad_kernels.py::smem_global", "--args", "f32[128]")
    assert bad.returncode == 1
    assert bad.stdout.splitlines()[-2:] == [
        "FAILED (lower): NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}",
        "  tests/fixtures/trace/bad_kernels.py:19  get_global(Ref<smem>{float32[128]})"]


def test_cli_json_output():
    run = cli("tests/fixtures/trace/kernels.py::scaled", "--format", "json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["kernels"][0]["smem_bytes"] == 66560 and result["args_source"] == "annotations"


def test_cli_missing_arguments_is_a_usage_error_that_says_what_is_missing(tmp_path):
    (tmp_path / "k.py").write_text("def f(x):\n    return x\n")
    run = cli(f"{tmp_path / 'k.py'}::f", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout.splitlines()[0] == "trace k.py::f (arguments not found)"
    assert run.stdout.splitlines()[-1] == (
        "FAILED (args): ArgsNotFound: no arguments to trace f with: no '# pallas-lsp: trace(f32[128,128])' "
        "comment directly above line 1; parameter 'x' has no annotation; no call of f(...) in this file. "
        "Give them with --args \"f32[128,128]\" or a '# pallas-lsp: trace(f32[128,128])' comment above it.")


def test_cli_interpreter_without_jax(tmp_path):
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "trace", "tests/fixtures/trace/kernels.py::add_one",
                          "--python", sys.executable], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 2
    assert run.stdout.splitlines()[-1] == (
        f"FAILED (worker): TraceError: {sys.executable} cannot run the trace: "
        "ModuleNotFoundError: No module named 'jax'. Pass your project's interpreter, the one with jax: "
        "--python PATH (or set [tool.pallas-lsp] python in pyproject.toml).")


def test_cli_failed_trace_says_nothing_of_compiling_above_its_failure():
    bad = cli("tests/fixtures/trace/bad_kernels.py::smem_global", "--args", "f32[128]")
    assert bad.returncode == 1
    lines = bad.stdout.splitlines()
    assert lines[2] == "jax 0.12.0.1 (jaxlib 0.12.0.1), Python " + lines[2].split("Python ")[1]
    assert lines[2].endswith("; lowering for cuda")  # not "lowered ..., not compiled (no local cuda device)"
    assert lines[4] == ("FAILED (lower): NotImplementedError: get_global only supports semaphores, "
                        "got Ref<smem>{float32[128]}")


def test_cli_json_columns_are_one_based_code_points_as_in_check(tmp_path):
    text = (TRACE / "bad_kernels.py").read_text()
    text = text.replace("    buffer = pl.get_global(", "    café = 0; buffer = pl.get_global(")  # é: 2 bytes
    (tmp_path / "k.py").write_text(text)
    traced = json.loads(cli("k.py::smem_global", "--args", "f32[128]", "--format", "json", cwd=tmp_path).stdout)
    (location,) = traced["error"]["locations"]
    checked = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--select", "PAL001",
                              "--python", jax_python(), "k.py"], capture_output=True, text=True, cwd=tmp_path,
                             timeout=300)
    (finding,) = json.loads(checked.stdout)
    line = text.splitlines()[finding["line"] - 1]
    assert line[finding["column"] - 1:].startswith("pl.get_global(")
    assert ((location["line"], location["column"], location["end_line"], location["end_column"])
            == (finding["line"], finding["column"], finding["end_line"], finding["end_column"]))


def test_cli_text_shows_control_characters_of_the_traced_code_escaped(tmp_path):
    (tmp_path / "k.py").write_text('def f(x):\n    print("\\x1b[31mred\\x1b[0m \\x9b2J", flush=True)\n'
                                   '    raise ValueError("\\x1b]0;title\\x07 bad")\n')
    run = cli("k.py::f", "--args", "f32[8]", cwd=tmp_path)
    assert run.returncode == 1
    assert re.findall(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", run.stdout) == []
    lines = run.stdout.splitlines()
    assert lines[-4:] == ["FAILED (trace): ValueError: \\x1b]0;title\\x07 bad", "  k.py:3",
                          "output of the traced code (last lines):", "  | \\x1b[31mred\\x1b[0m \\x9b2J"]


def test_text_report_of_a_crash_shows_the_output_tail():
    text = format_text({"ok": False, "path": str(TRACE / "x.py"), "function": "f", "args": ["f32[8]"],
                        "error": {"type": "WorkerCrashed", "message": "boom", "stage": "worker", "locations": []},
                        "output": "a\nb\n"}, cwd=str(REPO))
    assert text.splitlines() == ["trace tests/fixtures/trace/x.py::f(f32[8])", "FAILED (worker): WorkerCrashed: boom",
                                 "output of the traced code (last lines):", "  | a", "  | b"]
