"""The semaphore types of the kernels beside it, star-imported there."""
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

FLAG = plgpu.SemaphoreType.REGULAR
