"""Array layouts of the blocked scan kernels: one place for shapes and dtypes."""

import jax
import jax.numpy as jnp

BLOCK = 128
NUM_BLOCKS = 2

CARRY = jax.ShapeDtypeStruct((BLOCK,), jnp.float32)
SEQUENCE = jax.ShapeDtypeStruct((BLOCK * NUM_BLOCKS,), jnp.float32)
