"""Specs grown with .append, operands reshaped and padded before the launch."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def body(*refs):
    *in_refs, o_ref = refs
    total = in_refs[0][...]
    for ref in in_refs[1:]:
        total = total + ref[...]
    o_ref[...] = total


def add_all(*xs, block=128):
    xs = [jnp.pad(x.reshape(-1), (0, (-x.size) % block)) for x in xs]
    n = xs[0].shape[0]
    in_specs = []
    for _ in xs:
        in_specs.append(pl.BlockSpec((block,), lambda i: (i,)))
    return pl.pallas_call(body, grid=(n // block,), in_specs=in_specs, out_specs=pl.BlockSpec((block,), lambda i: (i,)),
                          out_shape=jax.ShapeDtypeStruct((n,), xs[0].dtype))(*xs)


if __name__ == "__main__":
    a = jnp.ones((10, 30), jnp.float32)
    add_all(a, a * 2, a * 3)
