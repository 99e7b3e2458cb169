"""Kernels the JAX-in-the-loop tests of the CLI and of the server share."""

import textwrap

# The rules see an SMEM buffer from get_global; what runs is a semaphore (a rebinding they cannot follow).
CONTRADICTED = textwrap.dedent("""\
    import functools

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    WHAT = plgpu.SMEM((128,), jnp.float32)
    globals()["WHAT"] = plgpu.SemaphoreType.REGULAR


    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))
    def add_one(x_ref, o_ref):
        sem = pl.get_global(WHAT)
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)
        o_ref[...] = x_ref[...] + 1.0


    def test_add_one():
        add_one(jnp.ones((128,), jnp.float32))
    """)
