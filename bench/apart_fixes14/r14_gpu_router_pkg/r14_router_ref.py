"""Reference router scores in plain jnp."""

import jax
import jax.numpy as jnp


def router_scores_reference(logits, bias, *, inv_temp: float = 1.0):
  probs = jax.nn.sigmoid(logits.astype(jnp.float32) * inv_temp)
  return probs.astype(logits.dtype), (probs + bias.astype(jnp.float32)).astype(logits.dtype)
