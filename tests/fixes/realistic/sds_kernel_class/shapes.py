"""Shapes shared by the model: the residual stream's buffer."""
import jax
import jax.numpy as jnp

RESIDUAL = jax.ShapeDtypeStruct((128,), jnp.float32)
