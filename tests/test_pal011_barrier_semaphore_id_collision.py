"""PAL011: under the TPU interpreter, collective_id among the ids (2000 up) of the kernel's own semaphores."""

import pytest

from conftest import at

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)

def body(x_ref, o_ref, *sems):
    barrier = pltpu.get_barrier_semaphore()
    pl.semaphore_signal(barrier)
    pl.semaphore_wait(barrier)
"""
TWO = "pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA"
THREE = "pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA((2,))"


def source(scratch, cid, interpret="interpret=pltpu.InterpretParams()", body=HEADER):
    return body + (f"\nk = pl.pallas_call(body, out_shape=X, scratch_shapes=[{scratch}], "
                   f"compiler_params=pltpu.CompilerParams(collective_id={cid}), {interpret})\n"
                   "def run(x):\n    return k(x)\n")


def message(cid, count, ids):
    return (f'JAX: "ValueError: Semaphore {cid} occurs as both fixed-id and internal."; use a collective_id below '
            f"2000. The TPU interpreter gives this kernel's {count} semaphore{'s' if count != 1 else ''} the {ids}, "
            f"and get_barrier_semaphore() is the semaphore with id collective_id={cid}; JAX reports it as "
            "JaxRuntimeError: INTERNAL: CpuCallback error.")


# A `*sems` body leaves the parameters' roles unplaced: the fixed bodies below name each one.
NAMED = {1: HEADER.replace("*sems", "a"), 2: HEADER.replace("*sems", "a, b")}


@pytest.mark.parametrize("scratch,cid,count,ids", [
    ("pltpu.SemaphoreType.REGULAR", 2000, 1, "id 2000"),
    (TWO, 2001, 2, "ids 2000-2001"),
    (THREE, 2002, 3, "ids 2000-2002"),  # an array takes one id per element
])
def test_collective_id_among_the_interpreters_ids(ws, scratch, cid, count, ids):
    text = source(scratch, cid, body=NAMED[scratch.count("SemaphoreType")])
    assert ws.check(source=text) == [
        ("PAL011", at(text, "pltpu.get_barrier_semaphore()"), message(cid, count, ids))]


@pytest.mark.parametrize("text", [
    source("pltpu.SemaphoreType.REGULAR", 2001, body=NAMED[1]),  # just past the one id
    source("pltpu.SemaphoreType.REGULAR", 1999, body=NAMED[1]),
    source(THREE, 2003, body=NAMED[2]),
    source("pltpu.SemaphoreType.REGULAR", 2000, interpret="interpret=False", body=NAMED[1]),  # compiled
    source("pltpu.SemaphoreType.REGULAR", 2000, interpret="interpret=True", body=NAMED[1]),  # not the TPU interpreter
    source("pltpu.SemaphoreType.REGULAR", 2000),  # *sems: which parameter is what is not static
])
def test_not_reported(ws, text):
    assert ws.check(source=text) == []
