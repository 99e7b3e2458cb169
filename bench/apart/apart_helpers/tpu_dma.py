"""Small DMA utilities for the TPU kernels."""
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_in(src_hbm, dst_vmem, sems, slot):
  cp = pltpu.make_async_copy(src_hbm, dst_vmem, sems.at[slot])
  cp.start()
  return cp


def copy_in_unindexed(src_hbm, dst_vmem, sems):
  cp = pltpu.make_async_copy(src_hbm, dst_vmem, sems)
  cp.start()
  return cp


def spin_until_ready(flag):
  pl.semaphore_wait(flag, 1, decrement=False)
