"""tokamax 0.0.17's Pallas kernels, called as its own tests call them."""
import jax
import jax.numpy as jnp
from tokamax._src.ops.linear_softmax_cross_entropy_loss import pallas_mosaic_tpu_kernel as lce
from tokamax._src.ops.mhc import post_kernel, pre_kernel
from tokamax._src.ops.router_topk import pallas_mosaic_tpu_kernel as router_topk


def test_router_topk():
  router_topk.select(jnp.ones((64, 128), jnp.float32), 8)


def test_mhc_pre_mixes():
  pre_kernel.mhc_pre_mixes(jnp.ones((64, 4 * 256), jnp.bfloat16), jnp.ones((24, 4 * 256), jnp.float32),
                           token_block_size=64)


def test_linear_softmax_cross_entropy_loss():
  x = jnp.ones((1024, 512), jnp.float32)
  labels = jnp.zeros((1024,), jnp.int32)
  w = jnp.ones((512, 2048), jnp.float32)
  lce.linear_softmax_cross_entropy_loss_fwd_pallas_mosaic_tpu(x, labels, w)


def test_mhc_post():
  post_kernel.mhc_post(jnp.ones((64, 256), jnp.bfloat16), jnp.ones((64, 4, 256), jnp.bfloat16),
                       jnp.ones((64, 4, 1), jnp.float32), jnp.ones((64, 4, 4), jnp.float32), token_block_size=64)
