"""Two kernels launched by one helper, interpreted on the CPU; only the clipped one asks get_global for its
staging buffer: the helper gains a scratch option its call for that kernel gives."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TILE = (8, 128)


def _double(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0


def _clipped_square(x_ref, o_ref, stage_ref):
  stage_ref[...] = jnp.clip(x_ref[...], -1.0, 1.0)
  o_ref[...] = stage_ref[...] * stage_ref[...]


def _launch(kernel, x, *, interpret=True, scratch_shapes=()):
  spec = pl.BlockSpec(TILE, lambda i: (i, 0))
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32),
      grid=(x.shape[0] // TILE[0],),
      in_specs=[spec],
      out_specs=spec,
      interpret=interpret,
      scratch_shapes=scratch_shapes,
  )(x)


def forward(x):
  return _launch(
    _clipped_square, _launch(_double, x), scratch_shapes=[pltpu.VMEM(TILE, jnp.float32)]
  )


def target():
  return forward, (jnp.linspace(-1.0, 1.0, 16 * 128, dtype=jnp.float32).reshape(16, 128),), "interpret"


def expected():
  x = jnp.linspace(-1.0, 1.0, 16 * 128, dtype=jnp.float32).reshape(16, 128)
  return jnp.clip(x * 2.0, -1.0, 1.0) ** 2
