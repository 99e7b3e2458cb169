"""PAL025: a Mosaic GPU kernel that interpret=True (the generic interpreter) runs, using warp specialization, TMA
copies or barriers; JAX's verdicts are in the agreement fixtures and the goldens (hlo_interpreter_*)."""

import pytest

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((16, 128), jnp.float32)

def body(x_gmem, o_gmem, *scratch):
    {body}
    o_gmem[...] = x_gmem[...]

def run(x):
    return plgpu.kernel(body, out_type=X, scratch_types=[{scratch}], interpret={interpret}{more})(x)
"""
TILE = "plgpu.SMEM((16, 128), jnp.float32)"
BARRIER = "plgpu.Barrier(num_arrivals=1)"


def source(body="pass", scratch=TILE, interpret="True", more=""):
    return HEADER.format(body=body, scratch=scratch, interpret=interpret, more=more)


@pytest.mark.parametrize("text,quote", [
    (source(more=", num_threads=2, thread_name='wg'"), "does not support collective axes"),
    (source("plgpu.copy_gmem_to_smem(x_gmem, scratch[0], scratch[1])", f"{TILE}, {BARRIER}"), "copy_gmem_to_smem"),
    (source("plgpu.barrier_wait(scratch[0])", BARRIER), "primitive: barrier_wait"),
    (source(scratch=f"{TILE}, {BARRIER}"), '"NotImplementedError: barrier"'),  # an unused barrier
    (source("plgpu.commit_smem()"), "commit_smem"),
])
def test_reported(ws, text, quote):
    found = ws.check(source=text)
    assert [code for code, _, _ in found] == ["PAL025"]
    assert quote in found[0][2]


@pytest.mark.parametrize("text", [
    source(),  # SMEM scratch only: the generic interpreter runs it
    source(more=", num_threads=None"),
    source("plgpu.copy_gmem_to_smem(x_gmem, scratch[0], scratch[1])", f"{TILE}, {BARRIER}",
           interpret="plgpu.InterpretGPUParams()"),
    source("plgpu.copy_gmem_to_smem(x_gmem, scratch[0], scratch[1])", f"{TILE}, {BARRIER}", interpret="False"),
])
def test_not_reported(ws, text):
    assert [code for code, _, _ in ws.check(source=text)] == []
