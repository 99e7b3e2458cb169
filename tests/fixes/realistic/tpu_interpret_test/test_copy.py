import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import tpu as pltpu

from copy_kernel import copy_rows


def test_copy_rows_interpreted():
    with pltpu.force_tpu_interpret_mode():
        out = copy_rows(jnp.ones((8, 128), jnp.float32))
    np.testing.assert_allclose(out, 2.0)
