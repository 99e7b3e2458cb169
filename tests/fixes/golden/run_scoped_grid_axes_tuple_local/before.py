"""A barrier and tile run_scoped with collective_axes=("i", "j"), the kernel's grid, before a keyword type."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 2, 64, 128), jnp.float32)


def _tile_copy(x_hbm, o_hbm):
  i, j = jax.lax.axis_index("i"), jax.lax.axis_index("j")

  def body(buf, *, bar):
    plgpu.copy_gmem_to_smem(x_hbm.at[i, j], buf, bar)
    plgpu.barrier_wait(bar)
    o_hbm[i, j] = buf[...]

  pl.run_scoped(body, plgpu.SMEM((64, 128), jnp.float32), collective_axes=("i", "j"), bar=plgpu.Barrier())


def target():
  return plgpu.kernel(_tile_copy, out_type=X, grid=(2, 2), grid_names=("i", "j")), (X,), "cuda"
