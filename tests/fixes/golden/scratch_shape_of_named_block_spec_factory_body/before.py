"""RMS norm over row blocks; the norm settings come from an abstract config, the body from a factory."""

import abc

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class RmsConfig(abc.ABC):
    @property
    @abc.abstractmethod
    def rows_per_block(self) -> int: ...

    eps = 1e-6


class SmallRms(RmsConfig):
    rows_per_block = 8


def make_rms_body(config: RmsConfig):
    def rms_body(x_ref, w_ref, o_ref):
        squares = pl.get_global(pltpu.VMEM(x_ref.shape, jnp.float32))
        x = x_ref[...].astype(jnp.float32)
        squares[...] = x * x
        scale = jax.lax.rsqrt(jnp.mean(squares[...], axis=1, keepdims=True) + config.eps)
        o_ref[...] = (x * scale * w_ref[...]).astype(o_ref.dtype)

    return rms_body


def rms_norm(x, w, config: RmsConfig = SmallRms(), interpret=True):
    rows, width = x.shape
    rows_spec = pl.BlockSpec((config.rows_per_block, width), lambda i: (i, 0))
    weight_spec = pl.BlockSpec((1, width), lambda i: (0, 0))
    return pl.pallas_call(
        make_rms_body(config),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(rows // config.rows_per_block,),
        in_specs=[rows_spec, weight_spec],
        out_specs=rows_spec,
        interpret=interpret,
    )(x, w)


def _inputs():
    x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128) % 5.0 + 1.0
    return x, jnp.full((1, 128), 0.5, jnp.float32)


@jax.jit
def reference(x, w, eps=RmsConfig.eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) + eps) * w


def expected():
    return np.asarray(reference(*_inputs()))


def target():
    return rms_norm, _inputs(), "interpret"
