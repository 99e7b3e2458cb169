"""A kernel builder collects scratch types with `add_scratch(*types)` and launches with `scratch_types=self.scratch`:
the SMEM staging tile this kernel's get_global asks for goes into this kernel's `add_scratch(...)` call, not into
the builder, which every kernel it makes would share."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 128


class KernelBuilder:

  def __init__(self, body, out):
    self.body = body
    self.out = out
    self.scratch = []

  def add_scratch(self, *types):
    self.scratch.extend(types)
    return self

  def build(self, blocks):
    return plgpu.kernel(self.body, out_type=self.out, grid=(blocks,), grid_names=("b",),
                        scratch_types=self.scratch)


def body(x_gmem, o_gmem, loaded):
  i = jax.lax.axis_index("b")
  tile = pl.get_global(plgpu.SMEM((ROWS,), jnp.float32))
  plgpu.copy_gmem_to_smem(x_gmem.at[i], tile, loaded)
  plgpu.barrier_wait(loaded)
  o_gmem[i] = tile[...] * 2.0


def launch(x):
  builder = KernelBuilder(body, jax.ShapeDtypeStruct(x.shape, x.dtype))
  builder.add_scratch(plgpu.Barrier(num_arrivals=1))
  return builder.build(x.shape[0])(x)


def target():
  return launch, (jax.ShapeDtypeStruct((2, ROWS), jnp.float32),), "cuda"
