"""The backward of a key/value projection (jax's TPU flash attention dK/dV kernel's shape): the dK accumulator takes
the key tile's trailing dimensions, `k_ref.shape[1:]`, and the grid spec is given lists named before it
(`specs = (...)`, `outputs = (...)`) with a scalar-prefetch operand in front: the accumulator is the named list's
block shape of its ref, `(block_kv, head_dim)`, at the launch, added to the scratch list the code already holds
(where the dV accumulator is)."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def dkv_kernel(lengths_ref, k_ref, v_ref, g_ref, dk_ref, dv_ref, dv_acc, dk_acc):
    step = pl.program_id(2)

    @pl.when(step == 0)
    def _():
        dk_acc[...] = jnp.zeros_like(dk_acc)
        dv_acc[...] = jnp.zeros_like(dv_acc)

    live = (step < lengths_ref[0]).astype(jnp.float32)
    dk_acc[...] += g_ref[0].astype(jnp.float32) * k_ref[0].astype(jnp.float32) * live
    dv_acc[...] += g_ref[0].astype(jnp.float32) * v_ref[0].astype(jnp.float32) * live

    @pl.when(step == pl.num_programs(2) - 1)
    def _():
        dk_ref[0] = dk_acc[...].astype(dk_ref.dtype)
        dv_ref[0] = dv_acc[...].astype(dv_ref.dtype)


def kv_backward(lengths, k, v, g, *, block_kv=128):
    batch, seq_len, head_dim = k.shape
    tile = pl.BlockSpec((1, block_kv, head_dim), lambda b, i, s, lengths: (b, i, 0))
    specs = (tile, tile, tile)
    outputs = (tile, tile)
    scratch_shapes = [
        pltpu.VMEM((block_kv, head_dim), jnp.float32),
        pltpu.VMEM((block_kv, head_dim), jnp.float32),
    ]
    return pl.pallas_call(
        dkv_kernel,
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(batch, seq_len // block_kv, 4),
            in_specs=specs,
            out_specs=outputs,
            scratch_shapes=scratch_shapes,
        ),
        out_shape=(jax.ShapeDtypeStruct(k.shape, k.dtype), jax.ShapeDtypeStruct(v.shape, v.dtype)),
    )(lengths, k, v, g)


def target():
    kv = jax.ShapeDtypeStruct((2, 512, 128), jnp.bfloat16)
    lengths = jax.ShapeDtypeStruct((1,), jnp.int32)
    return functools.partial(kv_backward, block_kv=128), (lengths, kv, kv, kv), "tpu"
