"""Two normalisations picked with if/else before one launch, interpreted on the CPU; the centred one asks
get_global for its f32 working tile: the other body takes the new scratch ref unused."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TILE = (8, 128)


def _scaled(x_ref, o_ref):
  o_ref[...] = x_ref[...] / 4.0


def _centred(x_ref, o_ref):
  work = pl.get_global(pltpu.VMEM(TILE, jnp.float32))
  work[...] = x_ref[...]
  o_ref[...] = work[...] - jnp.mean(work[...], axis=1, keepdims=True)


def normalise(x, centred=True):
  if centred:
    kernel = _centred
  else:
    kernel = _scaled
  spec = pl.BlockSpec(TILE, lambda i: (i, 0))
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // TILE[0],),
                        in_specs=[spec], out_specs=spec, interpret=True)(x)


def target():
  return normalise, (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128) % 7,), "interpret"


def expected():
  x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128) % 7
  return x - jnp.mean(x, axis=1, keepdims=True)
