"""The arrival barrier of a TMA copy made from a functools.partial of the barrier type."""
# fix-rate: kind=barrier_scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

single_arrival = functools.partial(plgpu.Barrier, num_arrivals=1)
N = 256


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((N,), jnp.float32),
    scratch_types=[plgpu.SMEM((N,), jnp.float32)],
)
def double_it(x_hbm, y_hbm, x_smem):
  arrived = pl.get_global(single_arrival())
  plgpu.copy_gmem_to_smem(x_hbm, x_smem, arrived)
  plgpu.barrier_wait(arrived)
  y_hbm[...] = x_smem[...] + x_smem[...]


def target():
  return double_it, (jax.ShapeDtypeStruct((N,), jnp.float32),), "cuda"
