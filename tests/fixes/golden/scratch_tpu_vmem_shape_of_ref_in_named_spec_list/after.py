"""A row-wise weighted sum whose accumulator takes the weight tile's shape, `w_ref.shape`, with the launch's
BlockSpecs first built as a list (`in_specs = [...]`, then `in_specs=in_specs`, as kernels with many operands
write it): the ref's block shape is that list's element, `(block_k, block_n)`, at the launch."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def weighted_sum_kernel(x_ref, w_ref, o_ref, acc_ref):

    @pl.when(pl.program_id(1) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += x_ref[...].astype(jnp.float32) * w_ref[...].astype(jnp.float32)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def weighted_sum(x, w, *, block_k=128, block_n=256):
    x_spec = pl.BlockSpec((block_k, block_n), lambda j, k: (k, j))
    w_spec = pl.BlockSpec((block_k, block_n), lambda j, k: (k, j))
    in_specs = [x_spec, w_spec]
    return pl.pallas_call(
        weighted_sum_kernel,
        grid=(w.shape[1] // block_n, w.shape[0] // block_k),
        in_specs=in_specs,
        out_specs=pl.BlockSpec((block_k, block_n), lambda j, k: (0, j)),
        out_shape=jax.ShapeDtypeStruct((block_k, w.shape[1]), x.dtype),
        scratch_shapes=[pltpu.VMEM((block_k, block_n), jnp.float32)],
    )(x, w)


def target():
    x = jax.ShapeDtypeStruct((512, 512), jnp.bfloat16)
    return functools.partial(weighted_sum, block_k=128, block_n=256), (x, x), "tpu"
