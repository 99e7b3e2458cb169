"""Token-mixing MLP block whose kernel a `debug=True` flag runs interpreted on the laptop.

`TokenMixer(debug=True)` passes the flag straight to `plgpu.kernel(interpret=...)`; the kernel
tiles the token axis over a named grid axis and reads its block index with
`jax.lax.axis_index`.
"""
# fix-rate: kind=interpret_params meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class MixerConfig:
  block_tokens: int = 16
  hidden: int = 128
  debug: bool = False


class TokenMixer:
  def __init__(self, config: MixerConfig):
    self.config = config

  def setup(self, num_tokens):
    self.num_blocks = num_tokens // self.config.block_tokens

  def _mix_body(self, x_ref, w_ref, o_ref):
    bt = self.config.block_tokens
    rows = pl.ds(jax.lax.axis_index("tok") * bt, bt)
    h = x_ref[rows, :] * w_ref[rows, :]
    o_ref[rows, :] = jnp.maximum(h, 0.0) + x_ref[rows, :]

  def __call__(self, x, w):
    self.setup(x.shape[0])
    return plgpu.kernel(
        self._mix_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(self.num_blocks,),
        grid_names=("tok",),
        interpret=self.config.debug,
    )(x, w)


DEBUG_MIXER = TokenMixer(dataclasses.replace(MixerConfig(), debug=True))


def _inputs():
  x = jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 7 - 3.0
  w = jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 3 - 1.0
  return x, w


def target():
  return DEBUG_MIXER, _inputs(), "interpret"


def expected():
  x, w = _inputs()
  return jnp.maximum(x * w, 0.0) + x


if __name__ == "__main__":
  print(jnp.array_equal(DEBUG_MIXER(*_inputs()), expected()))
