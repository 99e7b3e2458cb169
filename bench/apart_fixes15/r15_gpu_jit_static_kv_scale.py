"""Per-head key scaling before the cache write, as the decoding loop of the model calls it.

`scale_keys` is jitted with `static_argnames=("num_heads", "head_dim")`, so each head layout
gets its own kernel. The key block is brought into shared memory with a TMA copy; the copy's
completion is what the kernel waits on before scaling.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _tma_fetch(src_ref, dst_smem, done):
  plgpu.copy_gmem_to_smem(src_ref, dst_smem, done)
  plgpu.barrier_wait(done)


def _scale_keys_body(k_ref, scale_ref, o_ref, k_smem, *, head_dim):
  copy_done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  _tma_fetch(k_ref, k_smem, copy_done)
  inv = jax.lax.rsqrt(jnp.float32(head_dim))
  o_ref[...] = k_smem[...] * scale_ref[...] * inv


@functools.partial(jax.jit, static_argnames=("num_heads", "head_dim"))
def scale_keys(keys, scales, *, num_heads, head_dim):
  tokens = keys.shape[0]
  flat = keys.reshape(tokens, num_heads * head_dim)
  flat_scales = scales.reshape(tokens, num_heads * head_dim)
  out = plgpu.kernel(
      functools.partial(_scale_keys_body, head_dim=head_dim),
      out_type=jax.ShapeDtypeStruct(flat.shape, flat.dtype),
      scratch_types=[plgpu.SMEM(flat.shape, flat.dtype)],
  )(flat, flat_scales)
  return out.reshape(tokens, num_heads, head_dim)


class DecodeStep:
  def __init__(self, num_heads=2, head_dim=64):
    self.num_heads = num_heads
    self.head_dim = head_dim

  def __call__(self, keys, scales):
    return scale_keys(keys, scales, num_heads=self.num_heads, head_dim=self.head_dim)


def target():
  spec = jax.ShapeDtypeStruct((128, 2, 64), jnp.float32)
  return DecodeStep(), (spec, spec), "cuda"


if __name__ == "__main__":
  k = jnp.ones((128, 2, 64))
  print(DecodeStep()(k, k)[0, 0, :4])
