"""A clustered kernel that signals a global semaphore in one branch of a lax.cond, then calls a helper of another
module that reads a second one: Mosaic GPU lowers the branch twice and keeps both reservations (a JAX bug),
so the helper's get_global overflows (PAL004, reported in the helper). The branch's get_global moves before
the cond: the same global semaphore whichever branch runs."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from counters import read_progress

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X, cluster=(2,), cluster_names=("c",))
def body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  def flag():
    pl.semaphore_signal(done)

  def skip():
    pass

  lax.cond(x_ref[0] > 0, skip, flag)
  read_progress()
  o_ref[...] = x_ref[...] + 1.0


def target():
  return jax.jit(body), (X,), "cuda"
