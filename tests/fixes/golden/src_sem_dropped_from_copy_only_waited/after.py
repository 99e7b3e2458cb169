"""PAL017: a local copy started by another kernel, rebuilt here with src_sem= only to wait on it: .wait() waits
for the read first ("`wait_read` on a local copy without device_id is not implemented on TensorCore.")."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

T = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def body(x_hbm, o_hbm, recv_sem, send_sem):
  pltpu.make_async_copy(x_hbm, o_hbm, recv_sem).wait()


def target():
  return pl.pallas_call(body, out_shape=T, in_specs=[ANY], out_specs=ANY,
                        scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA]), (T,), "tpu"
