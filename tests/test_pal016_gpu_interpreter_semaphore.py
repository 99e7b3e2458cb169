"""PAL016: a scratch or pl.run_scoped semaphore in a kernel JAX's GPU interpreter runs, which allocates none
(jax 0.12: "NotImplementedError: nan + semaphore"; agreement fixtures bad_gpu_interpreter_* and
good_gpu_interpreter_*, good_interpret_true_scratch_semaphore). Each case below is run through real JAX too."""

import pytest

from conftest import at, jax_truth

HEADER = """\
import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""
SCRATCH_BODY = "def body(x_ref, o_ref, sem):\n  o_ref[...] = x_ref[...] + 1.0\n\n"
SCOPED_BODY = ("def body(x_ref, o_ref):\n  def scoped(sem):\n    pl.semaphore_signal(sem)\n    pl.semaphore_wait(sem)\n"
               "    o_ref[...] = x_ref[...] + 1.0\n\n  pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR)\n\n")
TARGET = "\ndef target():\n  return run, (jnp.ones((128,), jnp.float32),), 'interpret'\n"


def scratch_launch(interpret: str, scratch: str = "plgpu.SemaphoreType.REGULAR") -> str:
    return (f"kernel = plgpu.kernel(body, out_type=X, scratch_types=[{scratch}], interpret={interpret})\n\n"
            "def run(x):\n  return kernel(x)\n")


def nan(dtype="semaphore", where="in scratch_types", certain=True):
    head = 'JAX: "NotImplementedError: nan + ' + dtype + '"' if certain else \
        'JAX, under the GPU interpreter: "NotImplementedError: nan + ' + dtype + '"'
    return (f"{head}; use interpret=True. The GPU interpreter fills new memory with NaN, which a semaphore cannot "
            f"hold, so a {dtype} {where} fails as the kernel starts, used or not (interpret=True and the compiled "
            "kernel run it; a plgpu.alloc_semaphore() operand runs there too).")


# name -> (source after HEADER, the code reported, its message)
REPORTED = {
    "an unused scratch semaphore, at the launch": (
        SCRATCH_BODY + scratch_launch("plgpu.InterpretGPUParams()"), "kernel(x)", nan()),
    "a scratch semaphore array, the GPU interpreter's parameters named": (
        SCRATCH_BODY + "GPU_DEBUG = plgpu.InterpretGPUParams(detect_races=True)\n"
        + scratch_launch("GPU_DEBUG", "plgpu.SemaphoreType.REGULAR((4,))"), "kernel(x)", nan()),
    "a pl.run_scoped semaphore, at the run_scoped": (
        SCOPED_BODY + "kernel = plgpu.kernel(body, out_type=X, interpret=plgpu.InterpretGPUParams())\n\n"
        "def run(x):\n  return kernel(x)\n", "pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR)",
        nan(where="from pl.run_scoped")),
    "plgpu.force_gpu_interpret_mode() around the launch": (
        SCRATCH_BODY + "kernel = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])\n\n"
        "def run(x):\n  with plgpu.force_gpu_interpret_mode():\n    return kernel(x)\n", "kernel(x)", nan()),
    "zero-filled memory: JAX's other words": (
        SCRATCH_BODY + scratch_launch('plgpu.InterpretGPUParams(uninitialized_memory="zero")'), "kernel(x)",
        nan().replace("NotImplementedError: nan + semaphore",
                      "AttributeError: type object 'AbstractSemaphoreTyRules' has no attribute 'full'")),
    "the environment chooses the GPU interpreter: a warning": (
        SCRATCH_BODY + scratch_launch('plgpu.InterpretGPUParams() if os.environ.get("GPU_DEBUG") else False'),
        "kernel(x)", nan(certain=False)),
}


@pytest.mark.parametrize("name", list(REPORTED))
def test_a_semaphore_the_gpu_interpreter_allocates(ws, name):
    body, reported, expected = REPORTED[name]
    source = HEADER + "\n" + body
    found = ws.check(source=source)
    assert found == [("PAL016", at(source, reported), expected)]
    severity = [f.severity for f in ws.findings(source=source)]
    assert severity == (["warning"] if "warning" in name else ["error"])


QUIET = {
    "interpret=True runs a scratch semaphore": SCRATCH_BODY + scratch_launch("True"),
    "a semaphore operand (plgpu.alloc_semaphore) is no allocation of the interpreter's": (
        "def body(sem, x_ref, o_ref):\n  o_ref[...] = x_ref[...] + 1.0\n\n"
        "def run(x):\n  sem = plgpu.alloc_semaphore()\n"
        "  return plgpu.kernel(body, out_type=X, interpret=plgpu.InterpretGPUParams())(sem, x)\n"),
    "an SMEM barrier, which the GPU interpreter allocates": (
        "def body(x_ref, o_ref, barrier):\n  plgpu.barrier_arrive(barrier)\n  plgpu.barrier_wait(barrier)\n"
        "  o_ref[...] = x_ref[...] + 1.0\n\n" + scratch_launch("plgpu.InterpretGPUParams()", "plgpu.Barrier()")),
}


@pytest.mark.parametrize("name", list(QUIET))
def test_no_finding_where_the_interpreter_allocates_no_semaphore(ws, name):
    assert ws.check(source=HEADER + "\n" + QUIET[name]) == []


def test_jax_agrees_with_each_case(tmp_path):
    """Every case above, run as it is written (a jitted call on the CPU): JAX fails with the quoted words exactly
    where PAL016 is reported, and runs the quiet ones; the warning's case runs the GPU interpreter when asked."""
    import os

    paths = {}
    for index, (name, (body, _, expected)) in enumerate({**REPORTED, **{n: (b, None, None) for n, b in QUIET.items()}}.items()):
        path = tmp_path / f"case_{index}.py"
        path.write_text(HEADER + "\n" + body + TARGET)
        paths[path.name] = (name, expected)
    os.environ["GPU_DEBUG"] = "1"
    try:
        truths = jax_truth(list(tmp_path.glob("case_*.py")))
    finally:
        del os.environ["GPU_DEBUG"]
    for file, (name, expected) in paths.items():
        truth = truths[file]
        if expected is None:
            assert truth["ok"], (name, truth)
        else:
            assert not truth["ok"] and f'{truth["exc_type"]}: {truth["message"]}' in expected, (name, truth)
            [location] = truth["locations"]
            body = REPORTED[name][0]
            assert location["line"] == int(at(HEADER + "\n" + body, REPORTED[name][1]).split(":")[0]), (name, truth)


def test_after_a_tracing_error_jax_stops_there_first(ws):
    """PAL014 on `sems[1]` (the agreement fixture bad_wait_loaded_semaphore_gpu_interpreter): JAX fails while
    tracing, before the interpreter allocates anything, so PAL016 is not reported beside it."""
    from conftest import REPO

    source = (REPO / "tests" / "fixtures" / "agreement" / "bad_wait_loaded_semaphore_gpu_interpreter.py").read_text()
    assert [code for code, _, _ in ws.check(source=source)] == ["PAL014"]


def test_no_regular_semaphore_fix_under_the_gpu_interpreter(ws):
    """PAL013 on a TPU DMA semaphore signalled in a kernel the GPU interpreter runs: making it a REGULAR one would
    still fail there (PAL016's 'nan + semaphore'), so the shared check refuses the fix, and says why."""
    from pallas_lsp.fixes import fixes_and_reason

    source = HEADER + "from jax.experimental.pallas import tpu as pltpu\n\n" + (
        "def body(x_ref, o_ref, sem):\n  pl.semaphore_signal(sem)\n  pl.semaphore_wait(sem)\n"
        "  o_ref[...] = x_ref[...] + 1.0\n\n") + scratch_launch("plgpu.InterpretGPUParams()", "pltpu.SemaphoreType.DMA")
    findings = [f for f in ws.findings(source=source) if f.code == "PAL013"]
    assert findings, ws.check(source=source)
    assert "the GPU interpreter runs no semaphore" in fixes_and_reason(ws.project, findings[0])[1]


def test_a_test_module_that_forces_the_gpu_interpreter_marks_the_kernel_it_imports(ws):
    """`with plgpu.force_gpu_interpret_mode():` in a test module around a call of the kernel module's launcher: the
    kernel module gets PAL016 on its launch (the test would fail with 'nan + semaphore'); a launcher the switch
    does not reach, whose GPU interpreter a config's default turns off, gets nothing."""
    kernels = HEADER + (
        "\ndef body(x_ref, o_ref, sem):\n  pl.semaphore_signal(sem)\n  pl.semaphore_wait(sem)\n"
        "  o_ref[...] = x_ref[...] + 1.0\n\n"
        "def add_one(x, interpret=False):\n"
        "  params = plgpu.InterpretGPUParams() if interpret else None\n"
        "  return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR], interpret=params)(x)\n\n"
        "def add_one_plain(x):\n"
        "  return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])(x)\n")
    ws.write("test_kernels.py", "import jax.numpy as jnp\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
             "import kernels\n\n\ndef test_add_one_interpreted():\n  with plgpu.force_gpu_interpret_mode():\n"
             "    out = kernels.add_one_plain(jnp.ones((128,), jnp.float32))\n  assert (out == 2).all()\n")
    found = ws.check("kernels.py", kernels)
    reported = "plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])(x)"
    assert [(code, where) for code, where, _ in found] == [("PAL016", at(kernels, reported))]
