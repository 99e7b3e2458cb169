import os
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

INTERPRET = os.environ.get("KERNELS_INTERPRET", "1") == "1"
TILE = 8


def body(x_ref, o_ref, acc_ref):
    acc_ref[...] = x_ref[...] + 1.0
    o_ref[...] = acc_ref[...]


def add_one(x):
    spec = pl.BlockSpec((TILE, x.shape[1]), lambda i: (i, 0))
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // TILE,),
                          in_specs=[spec], out_specs=spec, interpret=INTERPRET,
                          scratch_shapes=[pltpu.VMEM((TILE, x.shape[1]), jnp.float32)])(x)


def expected():
    return np.full((16, 128), 2.0, np.float32)


def target():
    return add_one, (jnp.ones((16, 128), jnp.float32),), "interpret"
