"""A frozen dataclass sets its derived GMEM workspace type in `__post_init__` with `object.__setattr__` (a field
with `init=False`); the body reads it as `spec.scratch_gmem`. The workspace becomes one more output the caller
drops, its type carried at the launch from the same attribute."""
import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class ClipSpec:
  length: int
  chunk: int = 128
  chunks: int = dataclasses.field(init=False)
  scratch_gmem: Any = dataclasses.field(init=False)

  def __post_init__(self):
    object.__setattr__(self, "chunks", self.length // self.chunk)
    object.__setattr__(self, "scratch_gmem", plgpu.GMEM((self.length,), jnp.float32))


def _clip_body(x_ref, o_ref, *, spec: ClipSpec):
  c = jax.lax.axis_index("chunk")
  part = pl.ds(c * spec.chunk, spec.chunk)
  staged = pl.get_global(spec.scratch_gmem)
  staged[part] = x_ref[part] * 0.5
  o_ref[part] = jnp.clip(staged[part], -1.0, 1.0)


def clip_half(x, spec: ClipSpec):
  return plgpu.kernel(functools.partial(_clip_body, spec=spec), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      grid=(spec.chunks,), grid_names=("chunk",))(x)


SPEC = ClipSpec(length=256)


def target():
  return functools.partial(clip_half, spec=SPEC), (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
