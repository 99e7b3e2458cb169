"""A TPU kernel with a PrefetchScalarGridSpec built in the launch; each block signals and waits on its own DMA."""
# fix-rate: kind=scratch_grid_spec meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _copy_kernel(idx_ref, x_hbm, o_ref, buf):
    sem = pl.get_global(pltpu.SemaphoreType.DMA)
    copy = pltpu.make_async_copy(x_hbm.at[pl.ds(idx_ref[0], 8)], buf, sem)
    copy.start()
    copy.wait()
    o_ref[...] = buf[...] + 1.0


def gather(idx, x):
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(1,),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((8, 128), lambda i, idx: (0, 0)),
        scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)],
    )
    return pl.pallas_call(_copy_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid_spec=spec)(idx, x)


def target():
    return gather, (jax.ShapeDtypeStruct((1,), jnp.int32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "tpu"
