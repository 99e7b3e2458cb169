"""A `pl.kernel` whose `plgpu.Mesh` a helper makes (`mesh=block_mesh(n)`): compiled, it takes no scratch, so
the rest of the body runs under `pl.run_scoped` with the buffer.

(Before: a finding without a fix; the mesh made by the helper was not read, so the thread axis was not known.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def block_mesh(blocks):
    return plgpu.Mesh(grid=(blocks,), grid_names=("b",))


def body(x_ref, o_ref):
    buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    buf[...] = x_ref[...] * 2.0
    o_ref[...] = buf[...]


def doubled(x):
    return pl.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32), mesh=block_mesh(1))(x)


def target():
    return doubled, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
