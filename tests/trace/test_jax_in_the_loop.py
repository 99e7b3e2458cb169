"""JAX in the loop: the project's own entry points (tests, __main__ blocks, annotated functions) run for
real by `check --trace` / `types --trace` / `run_entry_points`, every Pallas launch they reach traced
and lowered by real JAX 0.12 (cross-lowered on the CPU for cuda and tpu), never run."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, at, jax_python
from jax_loop_kernels import CONTRADICTED
from pallas_lsp.trace.entry_points import discover, run_entry_points
from pallas_lsp.trace.worker import WorkerPool

pytestmark = pytest.mark.jax

HEADER = textwrap.dedent("""\
    import functools

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    X = jax.ShapeDtypeStruct((128,), jnp.float32)

""")


def source(text: str) -> str:
    """A module: the imports and X, then `text`."""
    return HEADER + textwrap.dedent(text)


KERNELS = source("""
    @functools.partial(plgpu.kernel, out_type=X)
    def smem_global(x_ref, o_ref):
        buffer = pl.get_global(plgpu.SMEM((128,), jnp.float32))
        o_ref[...] = x_ref[...] + buffer[...]


    @functools.partial(plgpu.kernel, out_type=X)
    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0


    @functools.partial(plgpu.kernel, out_type=X)
    def wrong_shape(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jnp.ones((64,), jnp.float32)


    def test_wrong_shape():
        wrong_shape(jnp.ones((128,), jnp.float32))


    if __name__ == "__main__":
        x = jnp.ones((128,), jnp.float32)
        add_one(x)
        smem_global(x)
""")


def cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env=env)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def line_of(source: str, snippet: str) -> int:
    return int(at(source, snippet).split(":")[0])


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool()
    yield pool
    pool.shutdown()


def run(pool, folder: Path, **options):
    return run_entry_points(pool, jax_python(), str(folder), [str(folder)], **options)


def by_id(entry_run) -> dict:
    return {result.entry.id: result for result in entry_run.results}


def test_check_trace_confirms_the_rule_jax_agrees_with_and_reports_what_only_jax_says(tmp_path):
    write(tmp_path, "kernels.py", KERNELS)
    run_ = cli("check", "--trace", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert run_.returncode == 1, run_.stderr
    found = json.loads(run_.stdout)
    get_global = line_of(KERNELS, "pl.get_global(plgpu.SMEM")
    broadcast = line_of(KERNELS, "o_ref[...] = x_ref[...] + jnp.ones((64,)")
    assert [(f["code"], f["line"], f["source"], f.get("confirmed", False)) for f in found] == [
        ("PAL001", get_global, "pallas-lsp", True), ("PAL100", broadcast, "jax", False)]
    assert found[0]["message"].endswith("(confirmed by JAX)")
    assert found[1]["message"] == "TypeError: add got incompatible shapes for broadcasting: (128,), (64,)."
    assert found[1]["related"] == [
        {"path": "kernels.py", "line": line_of(KERNELS, "    wrong_shape(jnp.ones"), "column": 5,
         "message": "the launch JAX rejected (plgpu.kernel, lowered for cuda)"},
        {"path": "kernels.py", "line": line_of(KERNELS, "def test_wrong_shape"), "column": 1,
         "message": "reached from the entry point kernels.py::test_wrong_shape"}]
    assert "--trace: 2 entry points (2 rejected); 3 launches reached, 2 rejected by JAX" in run_.stderr
    # Without the flag nothing runs: the rule's finding alone, not confirmed.
    static = json.loads(cli("check", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path).stdout)
    assert [(f["code"], f["source"], "confirmed" in f) for f in static] == [("PAL001", "pallas-lsp", False)]


def test_a_rule_error_on_a_launch_jax_lowered_is_left_out_and_said_with_v(tmp_path):
    text = write(tmp_path, "kernels.py", CONTRADICTED).read_text()
    static = cli("check", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert [line.split(" ")[1] for line in static.stdout.splitlines()[:-1]] == ["PAL001", "PAL005", "PAL005"]
    traced = cli("check", "--trace", "-v", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert (traced.returncode, traced.stdout) == (0, "All checks passed! (1 file checked)\n"), traced.stderr
    line = line_of(text, "sem = pl.get_global(WHAT)")
    assert (f"kernels.py:{line}: PAL001 left out: JAX lowered the launch of add_one (kernels.py:{line - 2}) "
            "for cuda (float32[128])") in traced.stderr


def test_a_factory_kernel_keeps_the_rule_finding_about_a_call_no_entry_point_makes(tmp_path):
    """JAX lowering the kernel one call of a factory builds says nothing of what another call builds."""
    write(tmp_path, "kernels.py", source("""
        def make(kind):
            def body(x_ref, o_ref):
                sem = pl.get_global(kind)
                pl.semaphore_signal(sem)
                pl.semaphore_wait(sem)
                o_ref[...] = x_ref[...] + 1.0
            return plgpu.kernel(body, out_type=X)


        def never_called():
            return make(plgpu.SMEM((128,), jnp.float32))


        def test_good():
            make(plgpu.SemaphoreType.REGULAR)(jnp.ones((128,), jnp.float32))
    """))
    traced = cli("check", "--trace", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert [(f["code"], f["source"]) for f in json.loads(traced.stdout)] == [("PAL001", "pallas-lsp")], traced.stderr


# ---- the API the server calls: run_entry_points ---------------------------------------------------

SCALE = textwrap.dedent("""\
    import jax
    from jax.experimental import pallas as pl


    def _double(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0


    def scale(x):
        return pl.pallas_call(_double, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
""")
TESTS = textwrap.dedent("""\
    import unittest

    import jax.numpy as jnp
    import pytest

    from scale import scale


    @pytest.mark.parametrize("n", [128, 256])
    def test_sizes(n):
        assert scale(jnp.ones((n,), jnp.float32)).shape == (n,)


    @pytest.mark.parametrize("rows,cols", [(8, 128), (16, 128)])
    def test_blocks(rows, cols):
        scale(jnp.ones((rows, cols), jnp.float32))


    def test_needs_a_fixture(tmp_path):
        scale(jnp.ones((8,), jnp.float32))


    def test_skips_itself():
        pytest.skip("no GPU here")


    def test_optional_dependency():
        import a_package_this_environment_does_not_have  # noqa: F401


    class TestScale:
        def test_method(self):
            scale(jnp.ones((64,), jnp.float32))


    class ScaleCase(unittest.TestCase):
        def setUp(self):
            self.x = jnp.ones((32,), jnp.float32)

        def test_case(self):
            self.assertEqual(scale(self.x).shape, (32,))

        @unittest.skip("not today")
        def test_skipped(self):
            scale(self.x)
""")


@pytest.fixture(scope="module")
def pytest_for_the_project(tmp_path_factory):
    """The analysed project's tests import pytest; .venvs/jax has none: this dev environment's pytest,
    linked into a folder on PYTHONPATH (which the trace worker inherits)."""
    import _pytest
    import pytest as real

    folder = tmp_path_factory.mktemp("pytest-for-the-project")
    site = Path(real.__file__).parent.parent
    for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py"):
        if (site / name).exists():
            (folder / name).symlink_to(site / name)
    assert Path(_pytest.__file__).parent.parent == site
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), before]))
    pool = WorkerPool()
    yield pool
    pool.shutdown()
    if before is None:
        os.environ.pop("PYTHONPATH")
    else:
        os.environ["PYTHONPATH"] = before


def test_tests_unittest_cases_and_each_literal_parametrize_case_run_and_what_cannot_run_is_skipped(
        tmp_path, pytest_for_the_project):
    write(tmp_path, "scale.py", SCALE)
    write(tmp_path, "test_scale.py", TESTS)
    found = run(pytest_for_the_project, tmp_path)
    assert found.problems == []
    outcomes = {result.entry.id: (result.outcome, result.message, [l["args"] for l in result.launches])
                for result in found.results}
    assert outcomes == {
        "test_scale.py::test_sizes[128]": ("ok", None, [["float32[128]"]]),
        "test_scale.py::test_sizes[256]": ("ok", None, [["float32[256]"]]),
        "test_scale.py::test_blocks[8-128]": ("ok", None, [["float32[8,128]"]]),
        "test_scale.py::test_blocks[16-128]": ("ok", None, [["float32[16,128]"]]),
        "test_scale.py::test_needs_a_fixture": ("skipped", "needs the fixture tmp_path", []),
        "test_scale.py::test_skips_itself": ("skipped", "skipped: no GPU here", []),
        "test_scale.py::test_optional_dependency": ("skipped", "needs a_package_this_environment_does_not_have", []),
        "test_scale.py::TestScale::test_method": ("ok", None, [["float32[64]"]]),
        "test_scale.py::ScaleCase::test_case": ("ok", None, [["float32[32]"]]),
        "test_scale.py::ScaleCase::test_skipped": ("skipped", "marked skip", []),
    }
    launch = by_id(found)["test_scale.py::test_sizes[128]"].launches[0]
    # A bare pallas_call is Triton on a GPU: cross-lowered under an abstract one, as `trace` does.
    assert (launch["api"], launch["platform"], launch["verdict"], launch["abstract_device"]) == (
        "pl.pallas_call", "cuda", "ok", "NVIDIA H200")
    assert launch["body"] == {"path": str((tmp_path / "scale.py").resolve()), "line": 5, "function": "_double"}
    assert launch["launch"]["line"] == 10  # the first frame of the project's own files: the call in scale()
    assert [r["aval"] for r in launch["kernel_refs"]] == ["Ref<default>{float32[128]}"] * 2


WRAPPED = source("""
    @functools.partial(plgpu.kernel, out_type=X)
    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0


    @jax.custom_vjp
    def differentiable(x):
        return add_one(x)


    def _forward(x):
        return add_one(x), None


    def _backward(_, g):
        return (g,)


    differentiable.defvjp(_forward, _backward)


    def test_vmap():
        assert jax.vmap(add_one)(jnp.ones((4, 128), jnp.float32)).shape == (4, 128)


    def test_custom_vjp():
        assert jax.grad(lambda x: differentiable(x).sum())(jnp.ones((128,), jnp.float32)).shape == (128,)


    def test_jit():
        assert jax.jit(lambda x: add_one(x.reshape(128)) * 2)(jnp.ones((2, 64), jnp.float32)).shape == (128,)
""")


def test_launches_under_vmap_custom_vjp_and_jit_are_lowered_with_their_abstract_arguments(tmp_path, pool):
    write(tmp_path, "kernels.py", WRAPPED)
    found = run(pool, tmp_path)
    assert {r.entry.id: r.outcome for r in found.results} == {
        "kernels.py::test_vmap": "ok", "kernels.py::test_custom_vjp": "ok", "kernels.py::test_jit": "ok"}
    for result in found.results:
        (launch,) = result.launches
        assert (launch["args"], launch["verdict"], launch["platform"]) == (["float32[128]"], "ok", "cuda"), result.entry.id
        assert launch["kernels"][0]["name"] == "add_one"  # JAX's resource estimate of it
    assert [k["name"] for k in found.kernels()] == ["add_one"] * 3


MISBEHAVING = source("""
    import os
    import signal
    import sys


    @functools.partial(plgpu.kernel, out_type=X)
    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0


    def launch():
        return add_one(jnp.ones((128,), jnp.float32))


    def test_exits():
        launch()
        sys.exit(3)


    def test_checks_the_zeros():
        assert (launch() == 2.0).all()


    def test_hangs():
        launch()
        while True:
            pass


    def test_hangs_deaf_to_the_alarm():
        launch()
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            pass


    def test_ends_the_interpreter():
        launch()
        os._exit(7)


    def test_prints_too_much():
        launch()
        while True:
            print("x" * 1000)


    def test_forks():
        if os.fork() == 0:
            launch()


    def test_still_runs_after_all_that():
        launch()
""")


def test_an_entry_that_exits_raises_hangs_crashes_floods_or_forks_ends_alone_with_what_it_reached(tmp_path, pool):
    write(tmp_path, "kernels.py", MISBEHAVING)
    found = run(pool, tmp_path, entry_timeout=3, output_limit=200_000)
    assert found.problems == []
    outcomes = {r.entry.id.split("::")[1]: (r.outcome, r.message, len(r.launches)) for r in found.results}
    assert outcomes == {
        "test_exits": ("exit", "called sys.exit(3): ended", 1),
        "test_checks_the_zeros": ("after_launches", "", 1),
        "test_hangs": ("timeout", "did not finish within 3 s: ended", 1),
        "test_hangs_deaf_to_the_alarm": ("timeout", "did not finish within 3 s: ended", 1),
        "test_ends_the_interpreter": ("crashed", "ended the Python interpreter (exit status 7)", 1),
        "test_prints_too_much": ("output", "printed more than 200,000 bytes: ended", 1),
        "test_forks": ("forked", "forked a process (os.fork): an entry point runs in one process; ended", 0),
        "test_still_runs_after_all_that": ("ok", None, 1),
    }
    after = next(r for r in found.results if r.outcome == "after_launches")
    assert (after.type, after.location["line"]) == ("AssertionError", line_of(MISBEHAVING, "assert (launch() == 2.0)"))
    flood = next(r for r in found.results if r.outcome == "output")
    assert set(flood.output) == {"x", "\n"} and len(flood.output) == 16 * 1024  # its last 16 KiB
    # No finding from any of it: JAX rejected nothing.
    from pallas_lsp.trace.jax_findings import jax_findings
    assert jax_findings(found) == []


RESHAPED = source("""
    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((8, 32), jnp.float32))
    def double(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0


    def run(x):
        return double(jnp.tile(x, 2).reshape(8, 32))


    def test_run():
        run(jnp.ones((128,), jnp.float32))
""")


def test_types_trace_gives_jax_s_own_types_where_the_source_cannot(tmp_path):
    write(tmp_path, "kernels.py", RESHAPED)
    line = line_of(RESHAPED, "def double(x_ref, o_ref)")
    inferred = cli("types", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert inferred.returncode == 0, inferred.stderr
    assert [(r["parameter"], r["type"], r["source"]) for r in json.loads(inferred.stdout)] == [
        ("x_ref", "Ref<gmem>{?[?]}", "inferred"), ("o_ref", "Ref<gmem>{float32[8,32]}", "inferred")]
    traced = cli("types", "--trace", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert traced.returncode == 0, traced.stderr
    assert json.loads(traced.stdout) == [
        {"path": "kernels.py", "line": line, "column": 12, "function": "double", "parameter": "x_ref",
         "type": "Ref<gmem>{float32[8,32]}", "source": "traced"},
        {"path": "kernels.py", "line": line, "column": 19, "function": "double", "parameter": "o_ref",
         "type": "Ref<gmem>{float32[8,32]}", "source": "traced"}]


TPU = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu


    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0


    def add(x):
        return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
                              out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
                              compiler_params=pltpu.CompilerParams())(x)


    if __name__ == "__main__":
        add(jnp.ones((8, 128), jnp.float32))
""")


def test_a_tpu_kernel_is_lowered_for_tpu(tmp_path, pool):
    write(tmp_path, "tpu_kernel.py", TPU)
    (result,) = run(pool, tmp_path).results
    (launch,) = result.launches
    assert (result.entry.id, result.outcome) == ("tpu_kernel.py::__main__", "ok")
    assert (launch["platform"], launch["verdict"], launch["platform_reason"]) == (
        "tpu", "ok", "its compiler_params are TPU ones")
    assert [r["aval"] for r in launch["kernel_refs"]] == ["Ref<vmem>{float32[8,128]}"] * 2
    for flags in (["--platform", "tpu"], []):  # asked for, or as the kernel model reads the kernel
        traced = cli("trace", "tpu_kernel.py::add", *flags, "--args", "f32[8,128]", "--format", "json",
                     "--python", jax_python(), cwd=tmp_path)
        result = json.loads(traced.stdout)
        assert (traced.returncode, result["ok"], result["lowering_platform"], result["compile_skipped"]) == (
            0, True, "tpu", "no local tpu device"), traced.stdout
    assert result["platform_reason"] == ("tpu: the kernel is a TPU one (pl.pallas_call with pltpu.CompilerParams), "
                                         "cross-lowered where there is no TPU")


TPU_DMA = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu


    def kernel(x_hbm_ref, y_ref):
        def body(x_ref, sem):
            pltpu.async_copy(x_hbm_ref, x_ref, sem).wait()
            y_ref[...] = x_ref[...]
        pl.run_scoped(body, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA)


    def test_copy():
        pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                       out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                       compiler_params=pltpu.CompilerParams())(jnp.zeros((8, 128), jnp.float32))
""")


def test_a_tpu_kernel_whose_lowering_asks_the_chip_is_lowered_for_an_abstract_tpu(tmp_path, pool):
    """VMEM scratch in run_scoped makes the TPU lowering ask the device's kind; on a machine without a TPU, JAX says
    `Unsupported TPU device kind: cpu` (no fault of the kernel: a false PAL100 on correct code). The lowering is tried
    again under an abstract TPU v5 lite, as for a bare GPU pallas_call under an abstract H200 (jax tests'
    tpu_pallas_test.py copies like this one)."""
    write(tmp_path, "test_tpu_copy.py", TPU_DMA)
    (result,) = run(pool, tmp_path).results
    (launch,) = result.launches
    assert (result.outcome, launch["platform"], launch["verdict"], launch["error"]) == ("ok", "tpu", "ok", None)
    assert launch["abstract_device"] == "TPU v5 lite"
    checked = cli("check", "--trace", "--python", jax_python(), "test_tpu_copy.py", cwd=tmp_path)
    assert (checked.returncode, checked.stdout.strip()) == (0, "All checks passed! (1 file checked)"), checked.stderr


def test_discovery_reads_the_source_only():
    text = textwrap.dedent("""\
        import pytest

        @pytest.mark.parametrize("n", [1, N])
        def test_names(n): ...

        @pytest.mark.skip(reason="later")
        def test_later(): ...

        class Helper:
            def test_not_collected(self): ...

        class TestWithInit:
            def __init__(self): ...
            def test_x(self): ...

        # pallas-lsp: trace(f32[8])
        def annotated(x): ...

        if __name__ == "__main__":
            raise SystemExit("never imported here")
    """)
    entries = discover("/nowhere/test_k.py", text)
    assert [(e.id, e.kind, e.line, e.skip) for e in entries] == [
        ("test_k.py::test_names", "test", 2, "parametrize values that are no literals (pytest.param, names, calls)"),
        ("test_k.py::test_later", "test", 5, "marked skip"),
        ("test_k.py::annotated", "annotated", 16, None),
        ("test_k.py::__main__", "main", 18, None)]
    assert [str(a) for a in entries[2].args] == ["f32[8]"]


def test_trace_reads_a_call_s_arguments_as_hovers_do(tmp_path):
    write(tmp_path, "k.py", source("""
        @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((128, 256), jnp.float32))
        def add_one(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0


        def run(x):
            return add_one(x)


        if __name__ == "__main__":
            x = jnp.ones((128, 256))
            run(x)
    """))
    traced = cli("trace", "k.py::run", "--format", "json", "--python", jax_python(), cwd=tmp_path)
    result = json.loads(traced.stdout)
    assert (traced.returncode, result["ok"], result["args"]) == (0, True, ["f32[128,256]"]), traced.stdout
    assert result["args_source"] == "call on line 22, as the analysis reads it"


def test_the_rule_page_example_is_what_check_trace_prints(tmp_path):
    import re

    page = (REPO / "docs" / "rules" / "PAL100-jax-error.md").read_text()
    example = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    shown = re.search(r"\$ pallas-lsp check --trace example.py\n(.*?)\n```", page, re.S).group(1).splitlines()
    write(tmp_path, "example.py", example)
    run_ = cli("check", "--trace", "--python", jax_python(), "example.py", cwd=tmp_path)
    assert run_.stdout.splitlines() == shown[1:], run_.stderr
    assert run_.stderr.startswith(shown[0].rsplit(";", 1)[0] + ";")  # the seconds differ


INTERPRETED_AND_EXPECTED = source("""
    import unittest


    @functools.partial(plgpu.kernel, out_type=X, interpret=True)
    def interpreted(x_ref, o_ref):
        sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)
        o_ref[...] = x_ref[...] + 1.0


    def _add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0


    def interpreted_call(x):
        return pl.pallas_call(_add_one, out_shape=X, interpret=True)(x)


    @functools.partial(plgpu.kernel, out_type=X)
    def wrong_shape(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jnp.ones((64,), jnp.float32)


    class KernelTest(unittest.TestCase):
        def test_jax_refuses_the_shapes(self):
            with self.assertRaises(TypeError):
                wrong_shape(jnp.ones((128,), jnp.float32))
            interpreted_call(jnp.ones((128,), jnp.float32))

        def test_interpreted(self):
            interpreted(jnp.ones((128,), jnp.float32))
""")


def test_interpreted_launches_lower_on_the_host_and_an_error_a_test_expects_is_no_finding(tmp_path, pool):
    write(tmp_path, "kernels.py", INTERPRETED_AND_EXPECTED)
    found = run(pool, tmp_path)
    results = by_id(found)
    expected = results["kernels.py::KernelTest::test_jax_refuses_the_shapes"]
    assert expected.outcome == "ok"  # assertRaises got JAX's TypeError, and the test went on
    assert [(l["api"], l["platform"], l["verdict"], l.get("expected", False)) for l in expected.launches] == [
        ("plgpu.kernel", "cuda", "rejected", True), ("pl.pallas_call", "host", "ok", False)]
    interpreted = results["kernels.py::KernelTest::test_interpreted"]
    (launch,) = interpreted.launches
    assert (interpreted.outcome, launch["platform"], launch["error"]["type"]) == ("rejected", "host", "TypeError")
    json_run = cli("check", "--trace", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    # The interpreter's get_global: PAL002, which JAX confirms on the host; nothing for the expected TypeError.
    assert [(f["code"], f["line"], f.get("confirmed")) for f in json.loads(json_run.stdout)] == [
        ("PAL002", line_of(INTERPRETED_AND_EXPECTED, "sem = pl.get_global(plgpu.SemaphoreType.REGULAR)"), True)]


def test_check_trace_with_an_interpreter_without_jax_is_an_error_not_a_pass(tmp_path):
    write(tmp_path, "kernels.py", KERNELS)
    run_ = cli("check", "--trace", "--python", sys.executable, "kernels.py", cwd=tmp_path)
    assert (run_.returncode, run_.stdout) == (2, "")
    assert run_.stderr == (f"pallas-lsp: error: --trace: {sys.executable} has no jax: entry points need the project's "
                           "interpreter, the one with jax (--python)\n")


def test_check_trace_fix_applies_only_the_fixes_jax_accepts(tmp_path):
    """The scratch fix of a `pl.get_global` buffer: JAX lowers the fixed kernel in one file; in the other a
    broadcast error no rule sees remains, JAX rejects the fixed code, and the file is left as it was."""
    launch = source("""
        def body(x_ref, o_ref):
            buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
            o_ref[...] = x_ref[...] + buf[...]


        def add(x):
            return plgpu.kernel(body, out_type=X)(x)


        if __name__ == "__main__":
            add(jnp.ones((128,), jnp.float32))
    """)
    still_broken = launch.replace("+ buf[...]", "+ buf[...] + jnp.ones((3,), jnp.float32)")
    write(tmp_path, "fixed.py", launch)
    write(tmp_path, "still_broken.py", still_broken)
    result = cli("check", "--trace", "--fix", "-v", "--python", jax_python(), ".", cwd=tmp_path)
    assert "scratch_types=[plgpu.SMEM((128,), jnp.float32)]" in (tmp_path / "fixed.py").read_text(), result.stderr
    assert (tmp_path / "still_broken.py").read_text() == still_broken
    line = line_of(still_broken, "buf = pl.get_global")
    assert (f"still_broken.py:{line}: 'pallas-lsp (PAL001): Allocate buf as scratch (scratch_types)' not applied: "
            "JAX rejects the fixed code: TypeError: add got incompatible shapes for broadcasting: (128,), (3,).") \
        in result.stderr
    assert f"fixed.py:{line_of(launch, 'buf = pl.get_global')}: 'pallas-lsp (PAL001): Allocate buf as scratch " \
           "(scratch_types)' verified by JAX" in result.stderr
    assert "its finding would remain" not in result.stderr  # the finding left, JAX-confirmed, is the rule's own
    # Without --trace the rules' fix is applied to both: their view cannot see the broadcast.
    write(tmp_path, "still_broken.py", still_broken)
    cli("check", "--fix", "--python", jax_python(), "still_broken.py", cwd=tmp_path)
    assert (tmp_path / "still_broken.py").read_text() != still_broken


ABSL_TESTS = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from absl.testing import absltest, parameterized
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jnp.ones((128,), jnp.float32)


    def add(x):
        return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


    class AddTest(parameterized.TestCase):

        @parameterized.parameters(128, 64)
        def test_sizes(self, n):
            add(jnp.ones((n,), jnp.float32))

        @parameterized.named_parameters(("small", 128), dict(testcase_name="odd", n=64))
        def test_named(self, n):
            add(jnp.ones((n,), jnp.float32))

        @parameterized.product(n=[128], dtype=[jnp.float32, jnp.bfloat16])
        def test_grid(self, n, dtype):
            add(jnp.ones((n,), dtype))

        @parameterized.parameters(*CASES)
        def test_from_a_name(self, n):
            add(jnp.ones((n,), jnp.float32))


    if __name__ == "__main__":
        absltest.main()
    """)


def test_absl_parameterized_tests_are_entry_points_named_as_absl_names_them():
    entries = discover("/nowhere/test_absl_k.py", ABSL_TESTS)
    assert [(e.id, e.function, e.skip) for e in entries] == [
        ("test_absl_k.py::AddTest::test_sizes0", "AddTest.test_sizes0", None),
        ("test_absl_k.py::AddTest::test_sizes1", "AddTest.test_sizes1", None),
        ("test_absl_k.py::AddTest::test_named_small", "AddTest.test_named_small", None),
        ("test_absl_k.py::AddTest::test_named_odd", "AddTest.test_named_odd", None),
        ("test_absl_k.py::AddTest::test_grid0", "AddTest.test_grid0", None),
        ("test_absl_k.py::AddTest::test_grid1", "AddTest.test_grid1", None),
        ("test_absl_k.py::AddTest::test_from_a_name", "AddTest.test_from_a_name",
         "absl parameters that are no literal list of cases"),
        ("test_absl_k.py::__main__", None, "runs the file's tests, which run as entry points of their own")]


def test_absl_parameterized_cases_run_each_by_the_name_absl_gives_it(tmp_path, pool):
    has_absl = subprocess.run([jax_python(), "-c", "import absl.testing.parameterized"], capture_output=True)
    if has_absl.returncode != 0:
        pytest.skip("the jax environment has no absl-py")
    write(tmp_path, "test_absl_k.py", ABSL_TESTS.replace("*CASES", "(128,)"))
    outcomes = {result.entry.id: (result.outcome, [launch["args"] for launch in result.launches])
                for result in run(pool, tmp_path).results}
    assert outcomes == {
        "test_absl_k.py::AddTest::test_sizes0": ("ok", [["float32[128]"]]),
        "test_absl_k.py::AddTest::test_sizes1": ("rejected", [["float32[64]"]]),
        "test_absl_k.py::AddTest::test_named_small": ("ok", [["float32[128]"]]),
        "test_absl_k.py::AddTest::test_named_odd": ("rejected", [["float32[64]"]]),
        "test_absl_k.py::AddTest::test_grid0": ("ok", [["float32[128]"]]),
        "test_absl_k.py::AddTest::test_grid1": ("rejected", [["bfloat16[128]"]]),
        "test_absl_k.py::AddTest::test_from_a_name0": ("ok", [["float32[128]"]]),
        "test_absl_k.py::__main__": ("skipped", [])}


def test_a_launch_under_vmap_is_lowered_batched_as_jax_builds_it(tmp_path):
    """Under jax.vmap JAX adds a grid axis to the kernel: two global semaphores need it. One example's
    kernel (no grid) is what JAX rejects; the batched one is what runs, and JAX lowers it."""
    write(tmp_path, "kernels.py", source("""
        def body(x_ref, o_ref):
            first = pl.get_global(plgpu.SemaphoreType.REGULAR)
            pl.semaphore_signal(first)
            second = pl.get_global(plgpu.SemaphoreType.REGULAR)
            pl.semaphore_signal(second)
            o_ref[...] = x_ref[...] + 1.0


        kernel = plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg")


        if __name__ == "__main__":
            jax.vmap(kernel)(jnp.ones((2, 128), jnp.float32))
    """))
    result = cli("check", "--trace", "-v", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "All checks passed! (1 file checked)\n"), result.stdout + result.stderr
    assert "1 launch reached, 0 rejected by JAX" in result.stderr


def test_jax_rejecting_the_code_around_the_kernels_is_a_pal100_on_the_users_line(tmp_path):
    """No launch is reached: JAX rejects the jitted function that calls get_global outside any kernel."""
    text = write(tmp_path, "kernels.py", source("""
        def notify():
            sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
            pl.semaphore_signal(sem)


        def step(x):
            notify()
            return x * 2


        if __name__ == "__main__":
            jax.jit(step)(jnp.ones((128,), jnp.float32))
    """)).read_text()
    result = cli("check", "--trace", "--format", "json", "--python", jax_python(), "kernels.py", cwd=tmp_path)
    found = [f for f in json.loads(result.stdout) if f["source"] == "jax"]
    assert [(f["code"], f["line"]) for f in found] == [("PAL100", line_of(text, "jax.jit(step)(jnp.ones"))], result.stderr
    assert found[0]["message"].startswith("ValueError: Cannot lower jaxpr with effects")
    assert found[0]["related"][0]["message"] == "raised by JAX, before any kernel launch, in the entry point kernels.py::__main__"
    assert "1 jax error" in result.stderr


def test_a_core_map_on_its_own_is_a_launch_lowered_for_its_mesh(tmp_path, pool):
    """`pl.core_map` in a `pl.run_state`, outside `pl.kernel`: the run_state is the launch, lowered
    for the mesh's platform (Mosaic GPU) instead of run (on this CPU it could not run)."""
    too_big = (REPO / "tests/fixtures/agreement/bad_smem_core_map_run_scoped.py").read_text() + textwrap.dedent("""

        def test_it():
            jax.jit(run)(jnp.ones((128,), jnp.float32))
    """)
    write(tmp_path, "test_too_big.py", too_big)
    write(tmp_path, "test_fits.py", too_big.replace("plgpu.SMEM((60000,)", "plgpu.SMEM((1024,)"))
    found = run(pool, tmp_path)
    outcomes = {r.entry.id: (r.outcome, [(l["api"], l["platform"], l["verdict"]) for l in r.launches])
                for r in found.results}
    assert outcomes == {"test_fits.py::test_it": ("ok", [("pl.core_map", "cuda", "ok")]),
                        "test_too_big.py::test_it": ("rejected", [("pl.core_map", "cuda", "rejected")])}
    (rejected,) = by_id(found)["test_too_big.py::test_it"].launches
    assert "exceeds available shared memory" in rejected["error"]["message"]


def _accelerator(python: str) -> str:
    probe = subprocess.run([python, "-c", "import jax; print(jax.default_backend())"], capture_output=True,
                           text=True, timeout=300)
    return (probe.stdout.strip().splitlines() or ["cpu"])[-1]


def test_where_a_gpu_or_tpu_is_attached_every_launch_jax_lowers_for_it_is_also_compiled(tmp_path):
    """On the recorded H200 and TPU runs (docs/jax-in-the-loop.md), what JAX lowered for the attached
    platform is compiled too (on a GPU the example's three Mosaic GPU launches JAX accepts, on a TPU its
    two TPU ones); a launch JAX rejects is not, nor one lowered for another platform. Skipped where only
    a CPU is attached (CI)."""
    backend = _accelerator(jax_python())
    if backend not in ("gpu", "cuda", "tpu"):
        pytest.skip("no GPU or TPU attached to the jax environment")
    # A TPU machine's jax may not import Mosaic GPU: there the TPU folder alone.
    folder, counts = ((REPO / "examples" / "in_the_loop" / "tpu", "3 launches reached, 1 rejected by JAX")
                      if backend == "tpu" else (REPO / "examples" / "in_the_loop", "8 launches reached, 3 rejected by JAX"))
    compiled = 2 if backend == "tpu" else 3
    run_ = cli("check", "--trace", "--python", jax_python(), str(folder), cwd=tmp_path)
    assert run_.returncode == 1, run_.stderr
    assert f"{counts}, {compiled} compiled;" in run_.stderr
    off = cli("check", "--trace", "--python", jax_python(), str(folder), cwd=tmp_path,
              env={**os.environ, "PALLAS_LSP_TRACE_COMPILE": "0"})
    assert f"{counts};" in off.stderr
