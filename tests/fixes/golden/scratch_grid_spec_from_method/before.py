"""A TPU kernel class whose launch takes `grid_spec=self._grid_spec(rows)`, a method that returns a
pltpu.PrefetchScalarGridSpec and that only this launch calls: the semaphore goes into that grid spec's
scratch_shapes, in the method (jax 0.12 takes scratch beside a grid spec as 'If `grid_spec` is specified, then
`scratch_shapes` must be `()`').
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class PageConfig:
    page_rows: int = 8
    width: int = 128


class PageCopy:
    def __init__(self, config: PageConfig = PageConfig()):
        self.config = config

    def _grid_spec(self, rows: int) -> pltpu.PrefetchScalarGridSpec:
        cfg = self.config
        return pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(1,),
            in_specs=[pl.BlockSpec((cfg.page_rows, cfg.width), lambda i, pages: (pages[i], 0))],
            out_specs=pl.BlockSpec((rows, cfg.width), lambda i, pages: (i, 0)),
        )

    def _kernel(self, pages_ref, x_ref, o_ref):
        copied = pl.get_global(pltpu.SemaphoreType.REGULAR)
        o_ref[...] = x_ref[...]
        pl.semaphore_signal(copied)
        pl.semaphore_wait(copied)

    def __call__(self, pages, x):
        cfg = self.config
        return pl.pallas_call(
            self._kernel,
            out_shape=jax.ShapeDtypeStruct((cfg.page_rows, cfg.width), x.dtype),
            grid_spec=self._grid_spec(cfg.page_rows),
        )(pages, x)


def target():
    cfg = PageConfig()
    pages = jax.ShapeDtypeStruct((1,), jnp.int32)
    x = jax.ShapeDtypeStruct((4 * cfg.page_rows, cfg.width), jnp.float32)
    return PageCopy(cfg), (pages, x), "tpu"
