"""A registry class of semaphore kinds read by a TPU kernel (scratch) and a GPU kernel (get_global, through
`self.sync.READY`): the GPU kernel's get_global asks for plgpu.SemaphoreType.REGULAR itself, and the registry
keeps the TPU type its TPU user needs.

(Before, no fix was offered, the type not being written where only this get_global reads it: jax 0.12
'get_global only supports semaphores, got Ref<semaphore_mem>{semaphore[]}'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


class Sync:
    READY = pltpu.SemaphoreType.REGULAR


def _tpu_body(x_ref, o_ref, ready):
    pl.semaphore_signal(ready)
    pl.semaphore_wait(ready)
    o_ref[...] = x_ref[...] * 2.0


def stage_tpu(x):
    return pl.pallas_call(_tpu_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          scratch_shapes=[Sync.READY])(x)


class Stage:
    sync = Sync

    def body(self, x_ref, o_ref):
        ready = pl.get_global(self.sync.READY)
        o_ref[...] = x_ref[...] * 2.0
        pl.semaphore_signal(ready)
        pl.semaphore_wait(ready)

    def run(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                            grid_names=("blocks",))(x)


def target():
    return Stage().run, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
