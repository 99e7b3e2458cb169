"""PAL011: under the TPU interpreter, collective_id=2001 is an id it gives the kernel's own semaphores (2000-2002);
the barrier gets the smallest id no other collective_id of the module names (0 is the all-reduce's)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def all_reduce_body(x_ref, o_ref):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  o_ref[...] = x_ref[...]


def scale_body(x_ref, o_ref, sem, copies):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] * 2.0


all_reduce = pl.pallas_call(all_reduce_body, out_shape=X,
                            compiler_params=pltpu.CompilerParams(collective_id=0),
                            interpret=pltpu.InterpretParams())
scale = pl.pallas_call(scale_body, out_shape=X,
                       scratch_shapes=[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA((2,))],
                       compiler_params=pltpu.CompilerParams(collective_id=1),
                       interpret=pltpu.InterpretParams())


def run(x):
  return scale(all_reduce(x))


def target():
  return run, (jnp.ones((8, 128), jnp.float32),), "interpret"


def expected():
  return jnp.full((8, 128), 2.0, jnp.float32)
