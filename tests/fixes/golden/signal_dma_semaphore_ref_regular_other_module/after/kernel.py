"""A TPU kernel whose helper, in another module, signals and waits on the value of a DMA semaphore
(`sem[...]`), whose type is that module's constant: the ref is what is meant, and the kernel starts no copy,
so the constant, read by this allocation alone, becomes REGULAR with the same fix."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from helper import SEM_TYPE
from helper import signal_and_wait

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem):
  signal_and_wait(sem)
  o_ref[...] = x_ref[...]


def target():
  return pl.pallas_call(body, out_shape=X, scratch_shapes=[SEM_TYPE]), (X,), "tpu"
