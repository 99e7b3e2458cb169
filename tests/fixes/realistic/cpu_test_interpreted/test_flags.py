import jax.numpy as jnp
import numpy as np

from flags import PhaseConfig, two_phase


def test_two_phase_on_cpu():
    out = two_phase(jnp.zeros((128,), jnp.float32), PhaseConfig(interpret=True))
    np.testing.assert_allclose(out, 2.0)
