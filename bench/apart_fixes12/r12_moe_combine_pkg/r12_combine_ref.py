"""Pure-JAX reference for the top-k MoE combine (the kernel's tests compare against it)."""

import jax.numpy as jnp


def combine_ref(expert_out, weights):
  acc = jnp.zeros(expert_out.shape[1:], jnp.float32)
  for k in range(expert_out.shape[0]):
    acc = acc + expert_out[k].astype(jnp.float32) * weights[k]
  return acc.astype(expert_out.dtype)
