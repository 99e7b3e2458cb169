"""A barrier got in a helper (`load`) that bodies registered by a decorator call; the launch picks its body from
the registry by key. Every registered body takes the scratch barrier: those calling the helper hand it on, the
other takes it unused (whichever body the launch picks, its parameters fit the scratch).

(Before: a finding without a fix; a decorator-filled registry was not read as the launch's bodies.)
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

KERNELS = {}


def kernel_for(op):
    def add(fn):
        KERNELS[op] = fn
        return fn

    return add


def load(src, dst, bar):
    plgpu.copy_gmem_to_smem(src, dst, barrier=bar)
    plgpu.barrier_wait(bar)


@kernel_for("neg")
def negated(x_ref, o_ref, tile, bar):
    load(x_ref, tile, bar)
    o_ref[...] = -tile[...]


@kernel_for("twice")
def twice(x_ref, o_ref, tile, bar):
    load(x_ref, tile, bar)
    o_ref[...] = tile[...] * 2.0


@kernel_for("copy")
def copied(x_ref, o_ref, tile, bar):
    o_ref[...] = x_ref[...]


def run(op, x):
    if op not in KERNELS:
        raise ValueError(op)
    body = KERNELS[op]
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        scratch_types=[plgpu.SMEM(x.shape, x.dtype),
                                       plgpu.Barrier(num_arrivals=1)])(x)


def target():
    return (lambda x: run("neg", x)), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
