# %% [markdown]
# # Linear-attention decay: scratch notebook (TPU)
#
# jupytext percent format. The decayed running sum `h_t = a * h_{t-1} + x_t` is carried
# across the sequential grid axis in a VMEM state block, one time chunk per grid step.
# fix-rate: kind=scratch meaning=preserving

# %%
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

T, D = 1024, 128
CHUNK = 8
DECAY = 0.9

# %%
state_shape = pltpu.VMEM((1, D), jnp.float32)


def decay_scan_body(x_ref, o_ref, *, decay):
  state = pl.get_global(state_shape)

  @pl.when(pl.program_id(0) == 0)
  def _():
    state[...] = jnp.zeros(state.shape, jnp.float32)

  for t in range(CHUNK):
    state[...] = decay * state[...] + x_ref[pl.ds(t, 1), :]
    o_ref[pl.ds(t, 1), :] = state[...]


# %%
def decay_scan(x, decay=DECAY):
  return pl.pallas_call(
      functools.partial(decay_scan_body, decay=decay),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // CHUNK,),
      in_specs=[pl.BlockSpec((CHUNK, D), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((CHUNK, D), lambda i: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


# %% [markdown]
# Compare against `lax.scan` once it runs on the pod.

# %%
def reference(x, decay=DECAY):
  def step(h, xt):
    h = decay * h + xt
    return h, h
  return jax.lax.scan(step, jnp.zeros((D,), x.dtype), x)[1]


def target():
  return decay_scan, (jax.ShapeDtypeStruct((T, D), jnp.float32),), "tpu"


# %%
if __name__ == "__main__":
  x = jax.random.normal(jax.random.key(1), (T, D))
  print(jnp.max(jnp.abs(decay_scan(x) - reference(x))))
