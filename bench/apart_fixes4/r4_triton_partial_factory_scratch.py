"""Row softmax with temperature for the sampler, on the Triton path of the GPU backend.

`triton_call` binds the launch parameters once for every kernel in this module. The exponentials of
a block are written to a scratch tile, then normalised.
"""
# fix-rate: kind=value meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton

triton_call = functools.partial(
    pl.pallas_call,
    compiler_params=pltriton.CompilerParams(num_warps=4, num_stages=1),
)


@dataclasses.dataclass(frozen=True)
class SamplerConfig:
  vocab_block: int = 256
  block_rows: int = 16
  temperature: float = 0.7


def _softmax_kernel(logits_ref, probs_ref, exp_ref, *, inv_temperature: float):
  x = logits_ref[...].astype(jnp.float32) * inv_temperature
  x = x - jnp.max(x, axis=-1, keepdims=True)
  exp_ref[...] = jnp.exp(x)
  denom = jnp.sum(exp_ref[...], axis=-1, keepdims=True)
  probs_ref[...] = (exp_ref[...] / denom).astype(probs_ref.dtype)


def make_softmax(cfg: SamplerConfig, rows: int):
  kernel = functools.partial(_softmax_kernel, inv_temperature=1.0 / cfg.temperature)
  block = (cfg.block_rows, cfg.vocab_block)
  return triton_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((rows, cfg.vocab_block), jnp.float32),
      grid=(rows // cfg.block_rows,),
      in_specs=[pl.BlockSpec(block, lambda i: (i, 0))],
      out_specs=pl.BlockSpec(block, lambda i: (i, 0)),
      scratch_shapes=[plgpu.SMEM(block, jnp.float32)],
  )


def sample_probs(logits: jax.Array, cfg: SamplerConfig = SamplerConfig()) -> jax.Array:
  return make_softmax(cfg, logits.shape[0])(logits)


def reference(logits, cfg: SamplerConfig = SamplerConfig()):
  return jax.nn.softmax(logits.astype(jnp.float32) / cfg.temperature, axis=-1)


def target():
  return sample_probs, (jax.ShapeDtypeStruct((64, 256), jnp.bfloat16),), "triton"


if __name__ == "__main__":
  logits = jax.random.normal(jax.random.key(7), (64, 256), jnp.bfloat16)
  print(float(jnp.max(jnp.abs(sample_probs(logits) - reference(logits)))))
