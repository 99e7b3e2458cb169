"""Block-level ready flags for a split-K reduction, as semaphores (Mosaic GPU)."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class SplitKConfig:
  num_splits: int = 4
  block: int = 128
  dtype: jnp.dtype = jnp.float32


def make_splitk_reduce(cfg: SplitKConfig):
  def body(partials_ref, out_ref):
    split = jax.lax.axis_index("split")
    flags = pl.get_global(plgpu.SemaphoreType.REGULAR((cfg.num_splits,)))
    pl.semaphore_signal(flags.at[split])
    pl.semaphore_wait(flags.at[split], 1)
    out_ref[...] = partials_ref[...] * 2.0

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((cfg.block,), cfg.dtype),
      grid=(cfg.num_splits,),
      grid_names=("split",),
  )


CFG = SplitKConfig()


def target():
  fn = make_splitk_reduce(CFG)
  return fn, (jax.ShapeDtypeStruct((CFG.block,), CFG.dtype),), "cuda"


if __name__ == "__main__":
  x = jnp.ones((CFG.block,), CFG.dtype)
  print(make_splitk_reduce(CFG)(x))
