"""Row gather with scalar prefetch and manual DMAs per row (TPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def gather_kernel(idx_ref, x_hbm, o_ref, buf, sem):
  i = pl.program_id(0)
  row = idx_ref[i]
  cp = pltpu.make_async_copy(x_hbm.at[pl.ds(row * 8, 8)], buf, sem[0])
  cp.start()
  cp.wait()
  o_ref[...] = buf[...]


def gather(idx, x):
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(idx.shape[0],),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((8, 128), lambda i, idx: (i, 0)),
      scratch_shapes=[pltpu.VMEM((8, 128), x.dtype), pltpu.SemaphoreType.DMA((1,))],
  )
  return pl.pallas_call(
      gather_kernel,
      out_shape=jax.ShapeDtypeStruct((idx.shape[0] * 8, 128), x.dtype),
      grid_spec=grid_spec,
  )(idx, x)


def target():
  return gather, (jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "tpu"


if __name__ == "__main__":
  print(gather(jnp.array([3, 1, 0, 2], jnp.int32), jnp.ones((64, 128), jnp.float32)))
