"""A TPU gather with scalar prefetch whose specs are in `grid_spec=pltpu.PrefetchScalarGridSpec(...)`: the
semaphore becomes scratch in the grid spec's own scratch_shapes, created there.

(A fix once added `scratch_shapes=` to the pallas_call beside the grid spec, and offered it as safe: jax 0.12
'ValueError: If `grid_spec` is specified, then `scratch_shapes` must be `()`'. With 4 blocks in the grid
spec's grid, a scratch semaphore is shared by the iterations on one core, not across a chip's cores: unsafe.)
"""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GatherConfig:
    block_rows: int = 8
    width: int = 128
    num_blocks: int = 4


def _gather_kernel(idx_ref, x_ref, o_ref, sem_ref):
    pl.semaphore_signal(sem_ref)
    pl.semaphore_wait(sem_ref)
    o_ref[...] = x_ref[...] * 2.0


def gather_rows(idx, x, cfg: GatherConfig = GatherConfig()):
    return pl.pallas_call(
        _gather_kernel,
        out_shape=jax.ShapeDtypeStruct((cfg.num_blocks * cfg.block_rows, cfg.width), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(cfg.num_blocks,),
            in_specs=[pl.BlockSpec((cfg.block_rows, cfg.width), lambda i, idx: (idx[i], 0))],
            out_specs=pl.BlockSpec((cfg.block_rows, cfg.width), lambda i, idx: (i, 0)),
            scratch_shapes=[pltpu.SemaphoreType.REGULAR],
        ),
    )(idx, x)


def target():
    cfg = GatherConfig()
    idx = jax.ShapeDtypeStruct((cfg.num_blocks,), jnp.int32)
    x = jax.ShapeDtypeStruct((cfg.num_blocks * cfg.block_rows, cfg.width), jnp.float32)
    return functools.partial(gather_rows, cfg=cfg), (idx, x), "tpu"
