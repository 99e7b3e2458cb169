"""A scratch type held in a `typing.NamedTuple` field, the body bound by a lambda that hands JAX's refs on
(`lambda *refs: body(layout, *refs)`): the function the lambda calls takes the buffer as its last parameter,
and the launch allocates `layout.tile`.

(Before: no finding, then no fix; the NamedTuple's fields and the lambda's forwarding were not read.)
"""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class Layout(NamedTuple):
    n: int
    tile: plgpu.SMEM


def body(layout, x_ref, o_ref, buf):
    buf[...] = x_ref[...] * 3.0
    o_ref[...] = buf[...]


def tripled(x):
    layout = Layout(n=x.shape[0], tile=plgpu.SMEM(x.shape, x.dtype))
    return plgpu.kernel(lambda *refs: body(layout, *refs),
                        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        scratch_types=[layout.tile])(x)


def target():
    return tripled, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
