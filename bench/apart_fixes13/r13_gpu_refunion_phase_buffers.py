"""Two-phase gated residual for Mosaic GPU: phase 1 stages the gate, phase 2 the residual.

The two phases never overlap, so their SMEM tiles share storage through a
`plgpu.RefUnion`; the union is sized from a `GateResidualPlan`.
"""

# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class GateResidualPlan:
  n: int
  block: int = 128

  @property
  def grid(self) -> tuple[int, ...]:
    return (self.n // self.block,)

  @functools.cached_property
  def phase_union(self) -> plgpu.RefUnion:
    tile = plgpu.SMEM((self.block,), jnp.float32)
    return plgpu.RefUnion(tile, plgpu.SMEM((self.block,), jnp.float32))


def _gate_residual_body(plan, x_ref, g_ref, r_ref, o_ref):
  gate_tile, res_tile = pl.get_global(plan.phase_union)
  i = lax.axis_index("blocks")
  sl = pl.ds(i * plan.block, plan.block)
  # Phase 1: the gate in f32.
  gate_tile[...] = jax.nn.sigmoid(g_ref[sl].astype(jnp.float32))
  gated = x_ref[sl].astype(jnp.float32) * gate_tile[...]
  # Phase 2: reuses the same storage for the residual.
  res_tile[...] = r_ref[sl].astype(jnp.float32)
  o_ref[sl] = (gated + res_tile[...]).astype(o_ref.dtype)


class GatedResidual:
  """Callable op: `GatedResidual(plan)(x, gate, residual)`."""

  def __init__(self, plan: GateResidualPlan):
    self.plan = plan

  def __call__(self, x, gate, residual):
    kernel = plgpu.kernel(
        functools.partial(_gate_residual_body, self.plan),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=self.plan.grid,
        grid_names=("blocks",),
    )
    return kernel(x, gate, residual)


_OPS = {n: GatedResidual(GateResidualPlan(n)) for n in (1024, 2048)}


@jax.jit
def gated_residual(x, gate, residual):
  return _OPS[x.shape[0]](x, gate, residual)


def target():
  spec = jax.ShapeDtypeStruct((2048,), jnp.bfloat16)
  return gated_residual, (spec, spec, spec), "cuda"


if __name__ == "__main__":
  x = jnp.ones((2048,), jnp.bfloat16)
  print(gated_residual(x, x, x)[:4])
