"""PAL014: pl.semaphore_signal / pl.semaphore_wait given a value read out of a semaphore, or a number (exact
diagnostics: JAX checks the argument while tracing, before its shape and type; the first failing op of a function)."""

import pytest

from conftest import at

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
STEP = 1.0
"""
LAUNCH = "k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,)), {second}])\n"


def loaded(kind, meant, text, dtype="semaphore", held=""):
    return (f'JAX: "ValueError: Cannot {kind} on a non-semaphore Ref: {dtype}[]"; pass {meant}, not {text}. '
            f"{text}{held} reads the semaphore's value; {kind} takes a semaphore ref or an .at[] view of one.")


CASES = {
    "one semaphore of an array read out": (
        "    pl.semaphore_signal(a[0])\n", "pl.semaphore_signal(a[0])", loaded("signal", "the view a.at[0]", "a[0]")),
    "a scalar semaphore read whole, waited on": (
        "    pl.semaphore_wait(b[...])\n", "pl.semaphore_wait(b[...])", loaded("wait", "the ref b", "b[...]")),
    "a view read, through a name": (
        "    v = a.at[1][...]\n    pl.semaphore_signal(v)\n", "pl.semaphore_signal(v)",
        loaded("signal", "the ref a.at[1]", "a.at[1][...]", held=" (v holds it)")),
    "a number": (
        "    pl.semaphore_signal(0)\n", "pl.semaphore_signal(0)",
        'JAX: "ValueError: Cannot signal on a non-semaphore Ref: ~int32[]"; pass a semaphore ref. 0 is a number; '
        "signal takes a semaphore ref (scratch, pl.run_scoped, pl.get_global) or an .at[] view of one."),
    "a float": (
        "    pl.semaphore_wait(1.0)\n", "pl.semaphore_wait(1.0)",
        'JAX: "ValueError: Cannot wait on a non-semaphore Ref: ~float32[]"; pass a semaphore ref. 1.0 is a number; '
        "wait takes a semaphore ref (scratch, pl.run_scoped, pl.get_global) or an .at[] view of one."),
    "a float through a name": (
        "    pl.semaphore_wait(STEP)\n", "pl.semaphore_wait(STEP)",
        'JAX: "ValueError: Cannot wait on a non-semaphore Ref: ~float32[]"; pass a semaphore ref. STEP is a number; '
        "wait takes a semaphore ref (scratch, pl.run_scoped, pl.get_global) or an .at[] view of one."),
    "tracing stops at the first one": (
        "    pl.semaphore_signal(b[...])\n    pl.semaphore_wait(b[...])\n", "pl.semaphore_signal(b[...])",
        loaded("signal", "the ref b", "b[...]")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_signal_wait_given_no_ref(ws, name):
    code, reported, expected = CASES[name]
    source = HEADER + "\ndef body(x, o, a, b):\n" + code + "    o[...] = x[...]\n\n" + LAUNCH.format(
        second="plgpu.SemaphoreType.REGULAR")
    assert ws.check(source=source) == [("PAL014", at(source, reported), expected)]
    (finding,) = ws.findings(source=source)
    assert [(f"{r.span.line + 1}:{r.span.column + 1}", r.message) for r in finding.related] == [
        (at(source, "plgpu.kernel(").split("-")[0], "kernel entry point (plgpu.kernel): plgpu.kernel lowers through Mosaic GPU")]


def test_a_dma_semaphore_read_out_is_no_ref_before_its_type_is_checked(ws):
    source = HEADER + ("\ndef body(x, o, sem):\n    pl.semaphore_signal(sem[...])\n    o[...] = x[...]\n\n"
                       "k = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.DMA],\n"
                       "                   compiler_params=pltpu.CompilerParams())\n")
    assert ws.check(source=source) == [
        ("PAL014", at(source, "pl.semaphore_signal(sem[...])"), loaded("signal", "the ref sem", "sem[...]", "dma_sem"))]


def test_a_value_handed_to_a_helper_of_another_module_is_reported_where_it_is_signalled(ws):
    ws.write("signals.py", "from jax.experimental import pallas as pl\n\n\ndef signal(sem):\n    pl.semaphore_signal(sem)\n")
    source = HEADER + ("from signals import signal\n\n\ndef body(x, o, a, b):\n    signal(b[...])\n    o[...] = x[...]\n\n"
                       + LAUNCH.format(second="plgpu.SemaphoreType.REGULAR"))
    ws.write("kernel.py", source)
    assert ws.check(source=source) == []
    assert ws.check(name="signals.py") == [
        ("PAL014", "5:5-5:29", loaded("signal", "the ref b", "b[...]", held=" (sem holds it)"))]


@pytest.mark.parametrize("code", [
    "    pl.semaphore_signal(a.at[0])\n    pl.semaphore_wait(a.at[0])\n",  # views
    "    pl.semaphore_signal(b)\n    pl.semaphore_wait(b, 1)\n",  # the ref itself
    "    n = pl.semaphore_read(b)\n    pl.semaphore_signal(b, n)\n",  # a read as the count, not the semaphore
    "    pl.semaphore_signal(sems[1])\n",  # an item of a tuple of refs is a ref
])
def test_not_reported(ws, code):
    source = HEADER + "\ndef body(x, o, a, b):\n    sems = (a, b)\n" + code + "    o[...] = x[...]\n\n" + LAUNCH.format(
        second="plgpu.SemaphoreType.REGULAR")
    assert ws.check(source=source) == []
