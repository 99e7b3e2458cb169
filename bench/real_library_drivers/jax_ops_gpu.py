"""jax's own GPU (Triton) Pallas ops (shipped in the jax wheel), called as a test would."""
import jax.numpy as jnp
from jax.experimental.pallas.ops.gpu import attention, decode_attention, layer_norm, rms_norm, softmax


def test_softmax():
  softmax.softmax(jnp.ones((8, 1024), jnp.float32))


def test_layer_norm():
  layer_norm.layer_norm(jnp.ones((4, 8, 1024)), jnp.ones((1024,)), jnp.zeros((1024,)))


def test_rms_norm():
  rms_norm.rms_norm(jnp.ones((4, 8, 1024)), jnp.ones((1024,)), jnp.zeros((1024,)))


def test_mha():
  q = jnp.ones((2, 256, 4, 64), jnp.float16)
  attention.mha(q, q, q, segment_ids=None)


def test_mqa():
  q = jnp.ones((2, 16, 64), jnp.float16)
  k = jnp.ones((2, 512, 64), jnp.float16)
  decode_attention.mqa(q, k, k)
