"""A semaphore output of a plgpu.kernel whose body takes a defaulted parameter (the semaphore kind, a
value no caller passes a ref for) and a keyword-only one a functools.partial binds: the semaphore becomes
a global one, asked for in the body, and both parameters stay."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, flags_ref, counters=plgpu.SemaphoreType.REGULAR((4,)), *, scale):
  counts = pl.get_global(counters)
  pl.semaphore_signal(flags_ref)
  pl.semaphore_wait(flags_ref)
  _ = pl.semaphore_read(counts.at[1])
  o_ref[...] = x_ref[...] * scale


def target():
  fn = plgpu.kernel(functools.partial(body, scale=2.0), out_type=(X, plgpu.SemaphoreType.REGULAR),
                    grid=(2,), grid_names=("x",))
  return jax.jit(fn), (X,), "cuda"
