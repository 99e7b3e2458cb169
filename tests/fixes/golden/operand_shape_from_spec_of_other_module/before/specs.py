"""Array specs shared by the kernels and their tests."""
import jax
import jax.numpy as jnp

PARTIAL = jax.ShapeDtypeStruct((256,), jnp.float32)
