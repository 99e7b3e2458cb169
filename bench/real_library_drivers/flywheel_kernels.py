"""flywheel-tpu 0.3.0's Pallas kernels, called as a test would."""
import jax.numpy as jnp
import flywheel_tpu
from flywheel_tpu.pallas import kv_cache_write


def test_kv_cache_write():
  k = jnp.ones((64, 2, 128), jnp.bfloat16)
  cache = jnp.zeros((8, 64, 4, 128), jnp.bfloat16)
  slices = jnp.zeros((3, 8), jnp.int32)
  kv_cache_write.write_kv_cache_pages(k, k, cache, slices, jnp.array([1], jnp.int32))


def test_flash_attn_func():
  q = jnp.ones((1, 4, 512, 128), jnp.bfloat16)
  flywheel_tpu.flash_attn_func(q, q, q, causal=True)
