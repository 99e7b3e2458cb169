"""Single-tile bf16 projection ``y = x @ w`` with WGMMA (Mosaic GPU, Hopper).

Used by the decoder's small output projections, where the whole problem is one
``(64, 64) @ (64, 128)`` tile per head group and the per-launch overhead of the
pipelined matmul is not worth it. Operands are brought in with TMA into swizzled
shared memory; the f32 accumulator lives in registers (``plgpu.ACC``).
"""

# fix-rate: kind=run_scoped meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class ProjectionTile:
  """Static tile geometry; ``swizzle`` is in bytes."""

  m: int = 64
  k: int = 64
  n: int = 128
  swizzle: int = 128
  dtype: jnp.dtype = jnp.bfloat16

  @property
  def swizzle_elems(self) -> int:
    return self.swizzle // jnp.dtype(self.dtype).itemsize

  @property
  def transforms(self):
    return (
        plgpu.TilingTransform((8, self.swizzle_elems)),
        plgpu.SwizzleTransform(self.swizzle),
    )

  def smem(self, shape):
    return plgpu.SMEM(shape, self.dtype, transforms=self.transforms)


DEFAULT_TILE = ProjectionTile()


def _projection_body(x_gmem, w_gmem, y_gmem, x_smem, w_smem, y_smem, loaded, *, tile):
  plgpu.copy_gmem_to_smem(x_gmem, x_smem, loaded)
  plgpu.copy_gmem_to_smem(w_gmem, w_smem, loaded)
  plgpu.barrier_wait(loaded)

  acc_ref = pl.get_global(plgpu.ACC((tile.m, tile.n), jnp.float32))
  plgpu.wgmma(acc_ref, x_smem, w_smem)
  plgpu.wgmma_wait(0)
  acc = acc_ref[...]

  y_smem[...] = acc.astype(y_smem.dtype)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(y_smem, y_gmem)
  plgpu.wait_smem_to_gmem(0)


def tile_projection(x: jax.Array, w: jax.Array, tile: ProjectionTile = DEFAULT_TILE):
  """Computes ``x @ w`` for one tile; shapes must match ``tile`` exactly."""
  if x.shape != (tile.m, tile.k) or w.shape != (tile.k, tile.n):
    raise ValueError(f"expected ({tile.m}, {tile.k}) @ ({tile.k}, {tile.n})")
  return plgpu.kernel(
      functools.partial(_projection_body, tile=tile),
      out_type=jax.ShapeDtypeStruct((tile.m, tile.n), tile.dtype),
      scratch_types=[
          tile.smem((tile.m, tile.k)),
          tile.smem((tile.k, tile.n)),
          tile.smem((tile.m, tile.n)),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(x, w)


@jax.jit
def grouped_projection(x: jax.Array, w: jax.Array) -> jax.Array:
  """``x`` is ``(groups, 64, 64)``, ``w`` is ``(groups, 64, 128)``."""
  return jnp.stack([tile_projection(x[g], w[g]) for g in range(x.shape[0])])


def target():
  tile = DEFAULT_TILE
  return (
      tile_projection,
      (
          jax.ShapeDtypeStruct((tile.m, tile.k), tile.dtype),
          jax.ShapeDtypeStruct((tile.k, tile.n), tile.dtype),
      ),
      "cuda",
  )


if __name__ == "__main__":
  kx, kw = jax.random.split(jax.random.key(0))
  x = jax.random.normal(kx, (2, 64, 64), jnp.bfloat16)
  w = jax.random.normal(kw, (2, 64, 128), jnp.bfloat16)
  ref = jnp.einsum("gmk,gkn->gmn", x, w, preferred_element_type=jnp.float32)
  print(jnp.max(jnp.abs(grouped_projection(x, w).astype(jnp.float32) - ref)))
