"""Shapes of the lookup tables, shared by the model code."""
import jax
import jax.numpy as jnp

BIAS_TABLE = jax.ShapeDtypeStruct((8, 128), jnp.float32)
