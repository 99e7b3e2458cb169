"""Each block writes its partial row sums to a global workspace, then reads them back scaled: the workspace was
asked for as a `plgpu.GMEM` scratch, first, before a barrier. It becomes one more output, which the launcher drops;
the body keeps its parameters (the first scratch's place is the new last output's).

(Before, jax 0.12: 'NotImplementedError: Unsupported memory space: gmem'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK = 128


def _partials(x_ref, o_ref, ws_ref, barrier):
    del barrier
    b = jax.lax.axis_index("b")
    rows = pl.ds(b * BLOCK, BLOCK)
    ws_ref[rows, :] = x_ref[rows, :] * 0.5
    o_ref[rows, :] = ws_ref[rows, :] + x_ref[rows, :]


def blend(x):
    n = x.shape[0] // BLOCK
    return plgpu.kernel(
        _partials,
        out_type=(
            jax.ShapeDtypeStruct(x.shape, jnp.float32),
            jax.ShapeDtypeStruct(x.shape, jnp.float32),
        ),
        scratch_types=[plgpu.Barrier(num_arrivals=1)],
        grid=(n,),
        grid_names=("b",),
    )(x)[0]


def target():
    return blend, (jax.ShapeDtypeStruct((512, 128), jnp.float32),), "cuda"
