# %% [markdown]
# # Split-K reduction on Hopper: exploration notebook
#
# Exported from the team notebook with jupytext (`# %%` cells). Each block of the grid
# writes its partial product; block 0 waits until every other block has published before
# it folds them into the output.
# fix-rate: kind=regular_semaphore meaning=preserving

# %%
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

NUM_SPLITS = 4
ROWS, COLS = 128, 128

# %% [markdown]
# The "published" counter lives in global memory so every CTA sees it. The barrier kind was
# the first thing tried for counting arrivals.

# %%
ARRIVALS = plgpu.SemaphoreType.BARRIER


def split_k_body(x_ref, o_ref, partial_ref):
  split = jax.lax.axis_index("split")
  published = pl.get_global(ARRIVALS)
  cols = pl.ds(split * (COLS // NUM_SPLITS), COLS // NUM_SPLITS)
  partial_ref[:, cols] = x_ref[:, cols] * 2.0

  @pl.when(split != 0)
  def _():
    pl.semaphore_signal(published)

  @pl.when(split == 0)
  def _():
    pl.semaphore_wait(published, NUM_SPLITS - 1)
    o_ref[...] = partial_ref[...] + 1.0


# %%
def split_k(x):
  out, _ = plgpu.kernel(
      split_k_body,
      out_type=(
          jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
          jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
      ),
      grid=(NUM_SPLITS,),
      grid_names=("split",),
  )(x)
  return out


# %%
def target():
  return split_k, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), "cuda"


# %%
if __name__ == "__main__":
  print(jax.jit(split_k).lower(jnp.ones((ROWS, COLS))).as_text()[:200])
