"""PAL024: a TPU SMEM ref read or written as an array in a kernel that may run compiled."""

import pytest

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)

def body(x_ref, o_ref, acc):
    {access}
    o_ref[...] = x_ref[...]

def run(x):
    return pl.pallas_call(body, out_shape=X, scratch_shapes=[{scratch}], compiler_params=pltpu.CompilerParams(){more})(x)
"""


def source(access, scratch="pltpu.SMEM((2, 4), jnp.float32)", more=""):
    return HEADER.format(access=access, scratch=scratch, more=more)


@pytest.mark.parametrize("text", [
    source("acc[...] = jnp.zeros((2, 4), jnp.float32)"),
    source("acc[0, :] = jnp.zeros((4,), jnp.float32)"),
    source("acc[1] = jnp.zeros((4,), jnp.float32)"),  # one index of two: a row
    source("acc[0, pl.ds(0, 2)] = jnp.zeros((2,), jnp.float32)"),
    source("y = acc[...]"),
])
def test_reported(ws, text):
    assert [code for code, _, _ in ws.check(source=text)] == ["PAL024"]


@pytest.mark.parametrize("text", [
    source("acc[0, 1] = 1.0"),
    source("acc[0, pl.program_id(0)] = acc[1, 0] + 1.0"),
    source("ij = (0, 1)\n    acc[ij] = 1.0"),  # a name may hold every index
    source("acc[...] = 1.0", scratch="pltpu.SMEM((), jnp.float32)"),  # a 0-d ref: its one element
    source("acc[...] = jnp.zeros((2, 4), jnp.float32)", scratch="pltpu.VMEM((2, 4), jnp.float32)"),
    source("acc[...] = jnp.zeros((2, 4), jnp.float32)", more=", interpret=pltpu.InterpretParams()"),
])
def test_not_reported(ws, text):
    assert [code for code, _, _ in ws.check(source=text)] == []
