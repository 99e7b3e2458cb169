"""A TPU two-way copy kernel whose config object lists its scratch: a REGULAR semaphore pair, one per direction,
each used only by its copy (`.at[0]`, `.at[1]`); the config's method is where the type is written."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class SwapConfig:
  rows: int = 8
  cols: int = 128

  def scratch(self):
    return [pltpu.VMEM((self.rows, self.cols), jnp.float32), pltpu.SemaphoreType.REGULAR((2,))]


def _swap_kernel(a_hbm, b_hbm, a_out, b_out, buf, sems, *, cfg):
  into = pltpu.make_async_copy(a_hbm, buf, sems.at[0])
  into.start()
  into.wait()
  out = pltpu.make_async_copy(b_hbm, a_out, sems.at[1])
  out.start()
  b_out[...] = buf[...]
  out.wait()


def swap(a, b, cfg=SwapConfig()):
  return pl.pallas_call(
      functools.partial(_swap_kernel, cfg=cfg),
      out_shape=(jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct(b.shape, b.dtype)),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=(pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pltpu.VMEM)),
      scratch_shapes=cfg.scratch(),
  )(a, b)


def target():
  x = jax.ShapeDtypeStruct((8, 128), jnp.float32)
  return swap, (x, x), "tpu"
