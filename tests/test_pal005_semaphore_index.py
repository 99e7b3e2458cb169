"""PAL005 on semaphores that are no get_global result: scratch, run_scoped, operand and TPU copy semaphores
(exact diagnostics and the related location naming where the semaphore's type is written)."""

import pytest

from conftest import at

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)
"""


def message(shape, rest, indices, acts="signal and wait act on a single semaphore", verb="signal"):
    dims = len(shape)
    return (f'JAX: "ValueError: Cannot {verb} on a non-()-shaped semaphore: {rest!r}"; index it down to one semaphore: '
            f".at[{', '.join('ijklmn'[:len(rest)])}]. The semaphore has shape {shape!r} and {indices} of its {dims} "
            f"dimension{'s' if dims > 1 else ''} {'are' if indices != 1 else 'is'} indexed; {acts}.")


SEND = "a copy's send (source) semaphore is a single semaphore"
RECEIVE = "a copy's receive (destination) semaphore is a single semaphore"
TPU = "compiler_params=pltpu.CompilerParams()"

CASES = {
    "plgpu.kernel scratch_types": (
        "def body(x_ref, o_ref, sems):\n    pl.semaphore_signal(sems)\n\n"
        "k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))])\n",
        "pl.semaphore_signal(sems)", message((2,), (2,), 0), "sems", "scratch_types[0]"),
    "a dict of scratch_types, waited on half-indexed": (
        "def body(x_ref, o_ref, *, flags):\n    pl.semaphore_wait(flags.at[1])\n\n"
        "k = plgpu.kernel(body, out_type=X, scratch_types=dict(flags=plgpu.SemaphoreType.REGULAR((2, 3))))\n",
        "pl.semaphore_wait(flags.at[1])", message((2, 3), (3,), 1, verb="wait"), "flags", "scratch_types['flags']"),
    "TPU scratch_shapes": (
        "def body(x_ref, o_ref, sems):\n    pl.semaphore_signal(sems)\n\n"
        f"k = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR((4,))], {TPU})\n",
        "pl.semaphore_signal(sems)", message((4,), (4,), 0), "sems", "scratch_shapes[0]"),
    "run_scoped": (
        "def body(x_ref, o_ref):\n    def scoped(sems):\n        pl.semaphore_signal(sems)\n"
        "    pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR((2,)))\n\n"
        "k = plgpu.kernel(body, out_type=X)\n",
        "pl.semaphore_signal(sems)", message((2,), (2,), 0), "sems", "pl.run_scoped"),
    "an alloc_semaphore operand": (
        "def body(sems, x_ref, o_ref):\n    pl.semaphore_signal(sems)\n\n"
        "k = plgpu.kernel(body, out_type=X)\n\ndef step(x):\n    return k(plgpu.alloc_semaphore((4,)), x)\n",
        "pl.semaphore_signal(sems)", message((4,), (4,), 0), "sems", "operand 0"),
    "a local copy, started later": (
        "def body(x, o, sems):\n    copy = pltpu.make_async_copy(x, o, sems)\n    copy.start()\n    copy.wait()\n\n"
        "k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, "
        f"scratch_shapes=[pltpu.SemaphoreType.DMA((2,))], {TPU})\n",
        "copy.start()", message((2,), (2,), 0, RECEIVE), "sems", "scratch_shapes[0]"),
    "a local copy's src_sem": (
        "def body(x, o, sem, sems):\n    pltpu.make_async_copy(x, o, sem, src_sem=sems).start()\n\n"
        "k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, "
        f"scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA((2,))], {TPU})\n",
        "pltpu.make_async_copy(x, o, sem, src_sem=sems).start()", message((2,), (2,), 0, SEND), "sems",
        "scratch_shapes[1]"),
    "a remote copy's send semaphore": (
        "def body(x, o, send, recv):\n    c = pltpu.make_async_remote_copy(x, o, send, recv.at[0], device_id=(0,))\n"
        "    c.start()\n\n"
        "k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, "
        f"scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,))], {TPU})\n",
        "c.start()", message((2,), (2,), 0, SEND), "send", "scratch_shapes[0]"),
    "async_copy starts it": (
        "def body(x, o, sems):\n    pltpu.async_copy(x, o, sems).wait()\n\n"
        "k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, "
        f"scratch_shapes=[pltpu.SemaphoreType.DMA((2,))], {TPU})\n",
        "pltpu.async_copy(x, o, sems)", message((2,), (2,), 0, RECEIVE), "sems", "scratch_shapes[0]"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_shaped_semaphore_without_full_index(ws, name):
    code, reported, expected, param, origin = CASES[name]
    source = HEADER + code
    assert ws.check(source=source) == [("PAL005", at(source, reported), expected)]
    (finding,) = ws.findings(source=source)
    shape = expected.split("has shape ")[1].split(" and")[0]
    assert [(f"{r.span.line + 1}:{r.span.column + 1}-{r.span.end_line + 1}:{r.span.end_column + 1}", r.message)
            for r in finding.related] == [(at(source, param), f"the semaphore, shape {shape}, is {origin}")]


@pytest.mark.parametrize("code", [
    # Indexed down to one semaphore, directly, in steps, or in a helper.
    "def body(x_ref, o_ref, sems):\n    pl.semaphore_signal(sems.at[1])\n    pl.semaphore_wait(sems.at[0])\n\n"
    "k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))])\n",
    "def ping(s, i):\n    pl.semaphore_signal(s.at[i].at[1])\n\ndef body(x_ref, o_ref):\n"
    "    pl.run_scoped(lambda s: None, plgpu.SemaphoreType.REGULAR((2,)))\n"
    "    def scoped(sems):\n        ping(sems, 0)\n    pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR((2, 2)))\n\n"
    "k = plgpu.kernel(body, out_type=X)\n",
    "def body(x, o, sems):\n    copy = pltpu.make_async_copy(x, o, sems.at[1])\n    copy.start()\n    copy.wait()\n\n"
    "k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, "
    f"scratch_shapes=[pltpu.SemaphoreType.DMA((2,))], {TPU})\n",
    # A descriptor that is never started signals nothing.
    "def body(x, o, sems):\n    pltpu.make_async_copy(x, o, sems)\n\n"
    "k = pl.pallas_call(body, out_shape=X, in_specs=[ANY], out_specs=ANY, "
    f"scratch_shapes=[pltpu.SemaphoreType.DMA((2,))], {TPU})\n",
    # Unshaped semaphores need no index.
    "def body(x_ref, o_ref, sem):\n    pl.semaphore_signal(sem)\n\n"
    "k = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])\n",
])
def test_not_reported(ws, code):
    assert ws.check(source=HEADER + code) == []
