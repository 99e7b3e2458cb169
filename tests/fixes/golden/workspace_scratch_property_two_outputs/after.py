"""A kernel with two outputs (values and their squares) stages through a workspace the plan's property describes as
`plgpu.GMEM`. The property now describes an output, which the launcher drops: its callers get their two results.

(Before, jax 0.12: 'NotImplementedError: Unsupported memory space: gmem'.)
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Plan:
    rows: int
    cols: int
    block: int = 64

    @property
    def staging(self):
        return jax.ShapeDtypeStruct((self.rows, self.cols), jnp.float32)


def _body(x_ref, v_ref, sq_ref, stage_ref, *, plan):
    rows = pl.ds(jax.lax.axis_index("i") * plan.block, plan.block)
    stage_ref[rows, :] = x_ref[rows, :] + 1.0
    v_ref[rows, :] = stage_ref[rows, :]
    sq_ref[rows, :] = stage_ref[rows, :] * stage_ref[rows, :]


def values_and_squares(x):
    plan = Plan(*x.shape)
    out = jax.ShapeDtypeStruct(x.shape, jnp.float32)
    kernel = plgpu.kernel(
        lambda *refs: _body(*refs, plan=plan),
        out_type=(out, out, plan.staging),
        grid=(plan.rows // plan.block,),
        grid_names=("i",),
    )
    values, squares = kernel(x)[:2]
    return values, squares


def target():
    return values_and_squares, (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "cuda"
