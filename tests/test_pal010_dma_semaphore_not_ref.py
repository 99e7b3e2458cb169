"""PAL010: a TPU copy's send or receive semaphore that is a value read out of a ref, or a number
(exact diagnostics: JAX checks at the copy's start, the receive semaphore first)."""

import pytest

from conftest import at

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)
"""
SCRATCH = "scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,))]"
LAUNCH = f"k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, {SCRATCH})\n"


def loaded(side, verb, view, text, held=""):
    return (f'JAX: "ValueError: DMA {side} semaphore must be a Ref."; pass the view {view}, not {text}. {text}{held} '
            f"reads the semaphore's value; the copy's {verb} semaphore must be a semaphore ref or an .at[] view of one.")


def number(side, verb, text, scratch="scratch_shapes"):
    return (f'JAX: "ValueError: DMA {side} semaphore must be a Ref."; pass a ref: a pltpu.SemaphoreType.DMA in '
            f"{scratch}. {text} is a number; the copy's {verb} semaphore must be a semaphore ref the DMA can signal.")


CASES = {
    "a remote copy's send semaphore read out": (
        "    c = pltpu.make_async_remote_copy(x, o, a[0], b.at[0], device_id=(0,))\n    c.start()\n",
        "c.start()", loaded("source", "send", "a.at[0]", "a[0]"), "a[0]", "the send semaphore argument"),
    "both read out: the receive semaphore is checked first": (
        "    pltpu.make_async_remote_copy(x, o, a[0], b[1], device_id=(0,)).start()\n",
        "pltpu.make_async_remote_copy(x, o, a[0], b[1], device_id=(0,)).start()",
        loaded("destination", "receive", "b.at[1]", "b[1]"), "b[1]", "the receive semaphore argument"),
    "read into a variable first": (
        "    done = b[1]\n    pltpu.make_async_copy(x, o, done).start()\n",
        "pltpu.make_async_copy(x, o, done).start()",
        loaded("destination", "receive", "b.at[1]", "b[1]", " (done holds it)"), "done",
        "the receive semaphore argument"),
    "a view, then read": (
        "    pltpu.async_copy(x, o, a.at[0][...]).wait()\n",
        "pltpu.async_copy(x, o, a.at[0][...])",
        'JAX: "ValueError: DMA destination semaphore must be a Ref."; pass the ref a.at[0], not a.at[0][...]. '
        "a.at[0][...] reads the semaphore's value; the copy's receive semaphore must be a semaphore ref or an .at[] "
        "view of one.", "a.at[0][...]", "the receive semaphore argument"),
    "a number as a local copy's src_sem, through a constant: dropped on the TensorCore (PAL017)": (
        "    c = pltpu.make_async_copy(x, o, a.at[0], src_sem=NO_SEM)\n    c.start()\n",
        "c.start()", 'JAX: "ValueError: DMA source semaphore must be a Ref."; drop src_sem. NO_SEM is a number, and a '
        "local copy takes no send semaphore on the TensorCore (a ref there fails as the copy is lowered: PAL017); "
        "its .wait() waits for the write, which ends after the read.", "NO_SEM", "the send semaphore argument"),
    "a number as a remote copy's send semaphore": (
        "    c = pltpu.make_async_remote_copy(x, o, NO_SEM, b.at[0], device_id=(0,))\n    c.start()\n",
        "c.start()", number("source", "send", "NO_SEM"), "NO_SEM", "the send semaphore argument"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_copy_semaphore_that_is_no_ref(ws, name):
    code, reported, expected, argument, words = CASES[name]
    source = HEADER + "NO_SEM = 0\n\ndef body(x, o, a, b):\n" + code + "\n" + LAUNCH
    assert ws.check(source=source) == [("PAL010", at(source, reported), expected)]
    (finding,) = ws.findings(source=source)
    assert [(f"{r.span.line + 1}:{r.span.column + 1}-{r.span.end_line + 1}:{r.span.end_column + 1}", r.message)
            for r in finding.related] == [(at(source, argument, 2 if argument in ("done", "NO_SEM") else 1), words)]


def test_the_scratch_parameter_of_pl_kernel_is_scratch_types(ws):
    source = HEADER + ("def body(x, o, a):\n    pltpu.make_async_copy(x, o, 3).start()\n\n"
                       "k = pl.kernel(body, out_type=X, mesh=pltpu.create_tensorcore_mesh('core'), "
                       "scratch_types=[pltpu.SemaphoreType.DMA])\n")
    assert ws.check(source=source) == [
        ("PAL010", at(source, "pltpu.make_async_copy(x, o, 3).start()"),
         number("destination", "receive", "3", "scratch_types"))]


@pytest.mark.parametrize("code", [
    "    pltpu.make_async_copy(x, o, a.at[1]).start()\n",  # views and refs
    "    done = b.at[1]\n    c = pltpu.make_async_copy(x, o, done)\n    c.start()\n",
    "    pltpu.make_async_copy(x, o, b[0])\n",  # never started: JAX checks nothing
    "    pltpu.make_async_copy(x, o, sems[0]).start()\n",  # an item of a *sems tuple is a ref
])
def test_not_reported(ws, code):
    source = HEADER + "def body(x, o, a, b):\n    sems = (a, b)\n" + code + "\n" + LAUNCH
    assert ws.check(source=source) == []
