"""Row reductions on TPU behind an abstract base: the base launches, each subclass says what it accumulates."""

import abc

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = 8


class RowReduction(abc.ABC):
    def __init__(self, cols, interpret=True):
        self.cols = cols
        self.interpret = interpret

    @property
    def scratch_shapes(self):
        return [pltpu.VMEM((BLOCK, self.cols), jnp.float32)]

    @abc.abstractmethod
    def accumulate(self, staged, x_ref, o_ref, *scratch):
        ...

    def _body(self, x_ref, o_ref, staged, *scratch):
        staged[...] = x_ref[...].astype(jnp.float32)
        self.accumulate(staged, x_ref, o_ref, *scratch)

    def __call__(self, x):
        rows = x.shape[0]
        return pl.pallas_call(
            self._body,
            out_shape=jax.ShapeDtypeStruct((rows, 1), jnp.float32),
            grid=(rows // BLOCK,),
            in_specs=[pl.BlockSpec((BLOCK, self.cols), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((BLOCK, 1), lambda i: (i, 0)),
            scratch_shapes=self.scratch_shapes,
            interpret=self.interpret,
        )(x)


class RowSum(RowReduction):
    def accumulate(self, staged, x_ref, o_ref):
        o_ref[...] = jnp.sum(staged[...], axis=1, keepdims=True)


class RowSumOfSquares(RowReduction):
    @property
    def scratch_shapes(self):
        return super().scratch_shapes + [
            pltpu.VMEM((BLOCK, self.cols), jnp.float32),
        ]

    def accumulate(self, staged, x_ref, o_ref, squares):
        squares[...] = staged[...] * staged[...]
        o_ref[...] = jnp.sum(squares[...], axis=1, keepdims=True)


def _inputs():
    return (jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 3.0,)


def expected():
    (x,) = _inputs()
    return np.sum(np.asarray(x) ** 2, axis=1, keepdims=True)


def target():
    return RowSumOfSquares(128), _inputs(), "interpret"
