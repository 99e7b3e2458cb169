import jax.numpy as jnp
import numpy as np

from ring import RingConfig, RingScale


def test_ring_scale_on_cpu():
    x = jnp.arange(256, dtype=jnp.float32)
    out = RingScale(RingConfig(interpret=True))(x)
    np.testing.assert_allclose(out, x * 2.0)
