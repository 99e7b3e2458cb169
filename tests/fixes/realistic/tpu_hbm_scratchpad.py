"""A TPU kernel that wants an HBM scratchpad shared by the whole grid through get_global."""
# fix-rate: kind=none meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(x_ref, o_ref):
    pad = pl.get_global(pltpu.HBM((32, 128), jnp.float32))
    i = pl.program_id(0)
    o_ref[...] = x_ref[...] + pad[pl.ds(i * 8, 8), :]


def run(x):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                          in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)


def target():
    return run, (jax.ShapeDtypeStruct((32, 128), jnp.float32),), "tpu"
