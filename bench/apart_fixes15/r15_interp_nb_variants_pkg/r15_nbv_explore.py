# %% [markdown]
# # Pooling variants — exploration notebook (jupytext percent script)
#
# Compares the kernel variants from `r15_nbv_kernels` against jnp on small inputs.
# fix-rate: kind=scratch meaning=preserving

# %%
import jax
import jax.numpy as jnp

from r15_nbv_kernels import WIDTH, all_variants, make_pooling_kernel

# %%
x = (jnp.arange(64 * WIDTH, dtype=jnp.float32).reshape(64, WIDTH) % 11) - 5.0
pooled = {kind: fn(x) for kind, fn in all_variants()}

# %% [markdown]
# Both statistics side by side: the sum pooled over rows and the max pooled over rows.


# %%
def pooled_features(x):
  return jnp.concatenate(
      [make_pooling_kernel("sum")(x), make_pooling_kernel("max")(x)], axis=0
  )


def target():
  return pooled_features, (x,), "interpret"


def expected():
  return jnp.stack([jnp.sum(x, axis=0), jnp.max(x, axis=0)])


# %%
if __name__ == "__main__":
  print(jnp.array_equal(pooled_features(x), expected()))
