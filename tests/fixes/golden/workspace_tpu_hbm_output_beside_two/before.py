"""A TPU kernel with two outputs spills each block's partial sums to an HBM workspace by DMA, then the last block
reads them all back: the workspace becomes a third output (left in HBM), which the caller's unpacking drops."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = 128
LANES = 256


def _partials_kernel(x_ref, total_ref, last_ref, partial, gathered, sem):
  b = pl.program_id(0)
  spill = pl.get_global(pltpu.HBM((4, 8, LANES), jnp.float32))
  partial[...] = jnp.sum(x_ref[...].reshape(BLOCK // 8, 8, LANES), axis=0)
  pltpu.async_copy(partial, spill.at[b], sem).wait()
  last_ref[...] = partial[...]

  @pl.when(b == pl.num_programs(0) - 1)
  def _():
    pltpu.async_copy(spill, gathered, sem).wait()
    total_ref[...] = jnp.sum(gathered[...], axis=0)


@jax.jit
def partial_sums(x):
  total, last = pl.pallas_call(
      _partials_kernel,
      out_shape=(jax.ShapeDtypeStruct((8, LANES), jnp.float32), jax.ShapeDtypeStruct((8, LANES), jnp.float32)),
      grid=(x.shape[0] // BLOCK,),
      in_specs=[pl.BlockSpec((BLOCK, LANES), lambda b: (b, 0))],
      out_specs=(pl.BlockSpec((8, LANES), lambda b: (0, 0)), pl.BlockSpec((8, LANES), lambda b: (0, 0))),
      scratch_shapes=[pltpu.VMEM((8, LANES), jnp.float32), pltpu.VMEM((4, 8, LANES), jnp.float32),
                      pltpu.SemaphoreType.DMA],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)
  return total + last


def target():
  return partial_sums, (jax.ShapeDtypeStruct((4 * BLOCK, LANES), jnp.float32),), "tpu"
