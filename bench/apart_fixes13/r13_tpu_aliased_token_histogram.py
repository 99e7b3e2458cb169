"""In-place token-frequency histogram update on TPU (for a frequency-penalty sampler).

The histogram buffer is donated and aliased to the output; each grid step adds one
block of token ids. A scalar count of tokens seen in the step lives in SMEM.
"""

# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

VOCAB_BLOCK = 512
TOKENS_PER_STEP = 8


def _hist_kernel(tok_ref, hist_in_ref, hist_out_ref):
  step = pl.program_id(0)
  seen = pl.get_global(pltpu.SMEM((1,), jnp.int32))

  @pl.when(step == 0)
  def _():
    hist_out_ref[...] = hist_in_ref[...]
    seen[0] = 0

  ids = jax.lax.broadcasted_iota(jnp.int32, (TOKENS_PER_STEP, VOCAB_BLOCK), 1)
  hits = (ids == tok_ref[...]).astype(jnp.float32)
  hist_out_ref[...] += jnp.sum(hits, axis=0, keepdims=True)
  seen[0] += TOKENS_PER_STEP


@functools.partial(jax.jit, donate_argnums=(1,))
def update_histogram(tokens, histogram):
  (num_tokens, _) = tokens.shape
  return pl.pallas_call(
      _hist_kernel,
      grid=(num_tokens // TOKENS_PER_STEP,),
      in_specs=[
          pl.BlockSpec((TOKENS_PER_STEP, 1), lambda s: (s, 0)),
          pl.BlockSpec((1, VOCAB_BLOCK), lambda s: (0, 0)),
      ],
      out_specs=pl.BlockSpec((1, VOCAB_BLOCK), lambda s: (0, 0)),
      out_shape=jax.ShapeDtypeStruct(histogram.shape, histogram.dtype),
      input_output_aliases={1: 0},
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(tokens, histogram)


def histogram_reference(tokens, histogram):
  ids = jnp.arange(VOCAB_BLOCK, dtype=jnp.int32)
  return histogram + jnp.sum((tokens == ids[None, :]).astype(histogram.dtype), axis=0, keepdims=True)


def frequency_penalty(logits, histogram, penalty: float = 0.5):
  """Applies the penalty the sampler uses: logits - penalty * count."""
  return logits - penalty * histogram


def target():
  args = (jax.ShapeDtypeStruct((64, 1), jnp.int32), jax.ShapeDtypeStruct((1, VOCAB_BLOCK), jnp.float32))
  return update_histogram, args, "tpu"


if __name__ == "__main__":
  toks = jnp.arange(64, dtype=jnp.int32).reshape(64, 1) % 17
  hist = jnp.zeros((1, VOCAB_BLOCK), jnp.float32)
  print(frequency_penalty(jnp.zeros((1, VOCAB_BLOCK)), histogram_reference(toks, hist))[0, :8])
