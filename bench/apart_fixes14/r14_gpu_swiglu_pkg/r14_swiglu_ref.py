"""Reference SwiGLU, registered as the XLA fallback."""

import jax
import jax.numpy as jnp

from r14_swiglu_registry import Backend, Platform, kernel_registry


@kernel_registry.register("swiglu", Platform.XLA, Backend.ANY)
def swiglu_reference(gate: jax.Array, up: jax.Array, *, block: int = 256) -> jax.Array:
  del block
  g = gate.astype(jnp.float32)
  return (g * jax.nn.sigmoid(g) * up.astype(jnp.float32)).astype(gate.dtype)
