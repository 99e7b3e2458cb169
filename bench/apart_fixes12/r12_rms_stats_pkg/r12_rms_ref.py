"""Reference mean-of-squares and RMSNorm (XLA)."""

import jax
import jax.numpy as jnp


def mean_square_ref(x):
  x = x.astype(jnp.float32)
  return jnp.mean(x * x, axis=-1)


def rms_norm_ref(x, weight, eps=1e-6):
  return (x * jax.lax.rsqrt(mean_square_ref(x)[:, None] + eps) * weight).astype(x.dtype)
