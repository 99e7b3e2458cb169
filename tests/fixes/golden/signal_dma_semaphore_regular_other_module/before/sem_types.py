"""The semaphore type the kernel of kernel.py allocates."""
from jax.experimental.pallas import tpu as pltpu

SEM_TYPE = pltpu.SemaphoreType.DMA
