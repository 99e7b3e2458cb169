"""The helper launches a body that stores float32 into a bfloat16 output: JAX rejects the store."""
import jax.numpy as jnp

from corpus_helpers.blocks import launch


def halve(x_ref, o_ref):
    o_ref[...] = x_ref[...].astype(jnp.float32) * 0.5


if __name__ == "__main__":
    launch(halve, jnp.ones((512,), jnp.bfloat16), 128)
