"""PAL001: the accumulator asked of get_global in a kernel launched through a lifted pallas_call (qwix's
`qpl.pallas_call`: pallas_call's signature, a function returned that launches the body), its grid spec written at
the call, the launch built in one place and called in another."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def pallas_call(kernel, out_shape, *, grid_spec=None, grid=(), in_specs=pl.no_block_spec,
                out_specs=pl.no_block_spec, scratch_shapes=(), **kwargs):
  if grid_spec is None:
    grid_spec = pl.GridSpec(grid, in_specs, out_specs, scratch_shapes)

  def wrapper(*args):
    return pl.pallas_call(lambda *refs: kernel(*refs), out_shape, grid_spec=grid_spec, **kwargs)(*args)

  return wrapper


def accumulate(x, *, tile=128):
  def kernel(steps_ref, x_ref, o_ref, acc_ref):

    @pl.when(pl.program_id(0) == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += x_ref[...] * steps_ref[0]
    o_ref[...] = acc_ref[...]

  call = pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((tile, tile), jnp.float32),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          in_specs=[pl.BlockSpec((tile, tile), lambda i, steps: (i, 0))],
          out_specs=pl.BlockSpec((tile, tile), lambda i, steps: (0, 0)),
          grid=(x.shape[0] // tile,),
          scratch_shapes=[pltpu.VMEM((tile, tile), jnp.float32)],
      ),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )
  return call(jnp.ones((1,), jnp.float32), x)


def target():
  return functools.partial(accumulate, tile=128), (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "tpu"
