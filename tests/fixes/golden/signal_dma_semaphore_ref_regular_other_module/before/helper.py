"""The semaphore type kernel.py allocates, and the helper its kernel calls."""
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SEM_TYPE = pltpu.SemaphoreType.DMA


def signal_and_wait(sem):
  pl.semaphore_signal(sem[...])
  pl.semaphore_wait(sem[...])
