"""Data-parallel residual scaling: a Pallas kernel per shard under `jax.shard_map`.

`scaled_residual` is jitted with `static_argnames=("alpha", "block_rows", "interpret")`; each
device runs the kernel on its batch shard. The CPU CI mesh has one device and runs the kernel
interpreted. The scaled branch is kept in a VMEM block before the residual add.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import Mesh, PartitionSpec as P


def _residual_body(x_ref, f_ref, o_ref, *, alpha, block_rows):
  branch = pl.get_global(pltpu.VMEM((block_rows, x_ref.shape[1]), jnp.float32))
  branch[...] = alpha * f_ref[...]
  o_ref[...] = x_ref[...] + branch[...]


def _local_kernel(x, f, *, alpha, block_rows, interpret):
  spec = pl.BlockSpec((block_rows, x.shape[1]), lambda i: (i, 0))
  return pl.pallas_call(
      functools.partial(_residual_body, alpha=alpha, block_rows=block_rows),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // block_rows,),
      in_specs=[spec, spec],
      out_specs=spec,
      interpret=interpret,
  )(x, f)


def make_mesh():
  return Mesh(np.array(jax.devices()[:1]), ("data",))


@functools.partial(jax.jit, static_argnames=("alpha", "block_rows", "interpret"))
def scaled_residual(x, f, *, alpha=0.5, block_rows=8, interpret=True):
  kernel = functools.partial(
      _local_kernel, alpha=alpha, block_rows=block_rows, interpret=interpret
  )
  return jax.shard_map(
      kernel,
      mesh=make_mesh(),
      in_specs=(P("data"), P("data")),
      out_specs=P("data"),
      check_vma=False,
  )(x, f)


def _inputs():
  x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 17
  f = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 5
  return x, f


def target():
  return functools.partial(scaled_residual, alpha=0.25), _inputs(), "interpret"


def expected():
  x, f = _inputs()
  return x + 0.25 * f


if __name__ == "__main__":
  print(np.array_equal(target()[0](*_inputs()), expected()))
