"""Array specs of the partial-sum pipeline, shared by its kernels and its tests."""

import jax
import jax.numpy as jnp

PARTIAL_LEN = 256
PARTIAL_SPEC = jax.ShapeDtypeStruct((PARTIAL_LEN,), jnp.float32)
INPUT_SPEC = jax.ShapeDtypeStruct((PARTIAL_LEN,), jnp.float32)
