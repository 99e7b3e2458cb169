"""A TPU column-max whose spill area's type is a plan object's attribute, built for each input shape: the
workspace becomes a second output of the launch, spelled with the plan's attribute, and the launcher's result
takes the first output back."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Plan:
  rows: int
  cols: int
  block: int = 64

  @property
  def steps(self):
    return self.rows // self.block

  @property
  def spill_type(self):
    return pltpu.HBM((self.steps, 8, self.cols), jnp.float32)


def make_colmax(plan: Plan):
  def body(x_ref, o_ref, slab, everything, sem):
    step = pl.program_id(0)
    spilled = pl.get_global(plan.spill_type)
    slab[...] = jnp.max(x_ref[...].reshape(plan.block // 8, 8, plan.cols), axis=0)
    out = pltpu.make_async_copy(slab, spilled.at[step], sem)
    out.start()
    out.wait()

    @pl.when(step == plan.steps - 1)
    def _():
      back = pltpu.make_async_copy(spilled, everything, sem)
      back.start()
      back.wait()
      o_ref[...] = jnp.max(everything[...], axis=0)

  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct((8, plan.cols), jnp.float32),
      grid=(plan.steps,),
      in_specs=[pl.BlockSpec((plan.block, plan.cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, plan.cols), lambda i: (0, 0)),
      scratch_shapes=[pltpu.VMEM((8, plan.cols), jnp.float32),
                      pltpu.VMEM((plan.steps, 8, plan.cols), jnp.float32), pltpu.SemaphoreType.DMA],
  )


def colmax(x):
  return make_colmax(Plan(*x.shape))(x)


def target():
  return colmax, (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "tpu"
