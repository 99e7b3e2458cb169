"""jax's own TPU Pallas ops (shipped in the jax wheel), called as a test would."""
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import example_kernel, flash_attention, matmul
from jax.experimental.pallas.ops.tpu.megablox import gmm
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention


def test_matmul():
  matmul.matmul(jnp.ones((512, 1024), jnp.bfloat16), jnp.ones((1024, 256), jnp.bfloat16), block_shape=(128, 128))


def test_double():
  example_kernel.double(jnp.ones((16, 128)))


def test_flash_attention():
  q = jnp.ones((2, 4, 256, 128), jnp.float32)
  flash_attention.flash_attention(q, q, q, causal=True)


def test_gmm():
  gmm(jnp.ones((512, 256), jnp.bfloat16), jnp.ones((4, 256, 128), jnp.bfloat16),
      jnp.array([128, 128, 128, 128], jnp.int32))


def test_paged_attention():
  q = jnp.ones((2, 8, 128), jnp.float32)
  pages = jnp.ones((2, 32, 16, 128), jnp.float32)
  lengths = jnp.array([40, 64], jnp.int32)
  page_indices = jnp.zeros((2, 8), jnp.int32)
  paged_attention(q, pages, pages, lengths, page_indices, pages_per_compute_block=4)
