"""A Triton kernel that parks an intermediate in a global buffer it writes whole and reads back whole: Triton has
neither get_global nor scratch, and the buffer becomes a value of the body (unsafe: the value keeps the dtype and
shape of what is written).

(Before, no fix was offered: jax 0.12 'Unimplemented primitive in Pallas Triton lowering: get_global'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def _rms_kernel(x_ref, o_ref):
    squares = x_ref[...].astype(jnp.float32) ** 2
    squares += 1e-6
    scale = jax.lax.rsqrt(jnp.mean(squares, axis=-1, keepdims=True))
    o_ref[...] = (x_ref[...].astype(jnp.float32) * scale).astype(o_ref.dtype)


def rms_normalize(x):
    return pl.pallas_call(
        _rms_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // 16,),
        in_specs=[pl.BlockSpec((16, 256), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((16, 256), lambda i: (i, 0)),
        compiler_params=pltriton.CompilerParams(num_warps=4),
    )(x)


def target():
    return rms_normalize, (jax.ShapeDtypeStruct((64, 256), jnp.float16),), "triton"
