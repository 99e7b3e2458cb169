"""Pluggable epilogues for a Mosaic GPU elementwise op.

Kernels are assembled from an `Epilogue` strategy object: the kernel computes the f32
pre-activation and hands it to `epilogue(pre, o_ref, sl)`, which decides how the tile is
finished and written. Strategies live in `EPILOGUES` so configs can name them.
"""

# fix-rate: clean

import abc
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Epilogue(abc.ABC):
  block: int

  @abc.abstractmethod
  def __call__(self, pre, o_ref, sl, staged) -> None:
    ...


@dataclasses.dataclass(frozen=True)
class PlainEpilogue(Epilogue):
  block: int = 128

  def __call__(self, pre, o_ref, sl, staged):
    del staged
    o_ref[sl] = pre.astype(o_ref.dtype)


@dataclasses.dataclass(frozen=True)
class SoftcapEpilogue(Epilogue):
  """tanh soft-capping; the capped tile is staged in f32 before the cast."""
  block: int = 128
  cap: float = 30.0

  def __call__(self, pre, o_ref, sl, staged):
    staged[...] = jnp.tanh(pre / self.cap) * self.cap
    o_ref[sl] = staged[...].astype(o_ref.dtype)


EPILOGUES = {"plain": PlainEpilogue, "softcap": SoftcapEpilogue}


@dataclasses.dataclass(frozen=True)
class LogitsConfig:
  epilogue: str = "softcap"
  block: int = 128
  temperature: float = 1.0

  def make_epilogue(self) -> Epilogue:
    return EPILOGUES[self.epilogue](block=self.block)


def _logits_body(cfg: LogitsConfig, epilogue: Epilogue, x_ref, o_ref, staged):
  i = lax.axis_index("blocks")
  sl = pl.ds(i * cfg.block, cfg.block)
  pre = x_ref[sl].astype(jnp.float32) / cfg.temperature
  epilogue(pre, o_ref, sl, staged)


@functools.partial(jax.jit, static_argnames=("cfg",))
def scaled_logits(x, cfg: LogitsConfig = LogitsConfig()):
  (n,) = x.shape
  kernel = plgpu.kernel(
      functools.partial(_logits_body, cfg, cfg.make_epilogue()),
      out_type=jax.ShapeDtypeStruct((n,), x.dtype),
      grid=(n // cfg.block,),
      grid_names=("blocks",),
      scratch_types=[plgpu.SMEM((cfg.block,), jnp.float32)],
  )
  return kernel(x)


def target():
  return scaled_logits, (jax.ShapeDtypeStruct((32768,), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  print(scaled_logits(jnp.ones((32768,), jnp.bfloat16))[:4])
