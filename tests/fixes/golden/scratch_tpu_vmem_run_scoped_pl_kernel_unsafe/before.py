"""A TPU VMEM buffer from get_global in a compiled pl.kernel, which takes no scratch: SMEM from run_scoped (unsafe)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  tile = pl.get_global(pltpu.VMEM((128,), jnp.float32))
  tile[...] = x_ref[...] + 1.0
  o_ref[...] = tile[...]


kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=2, thread_name="wg"))


def target():
  return kernel, (X,), "cuda"
