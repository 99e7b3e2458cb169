"""Resources of the paged-KV gather kernels, as module constants.

Kept apart from the kernel so the serving config can size pages without importing Pallas
kernels; the kernel module reads these.
"""

import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu

PAGE_ROWS = 8
HEAD_DIM = 128
NUM_SLOTS = 2

PAGE_DTYPE = jnp.bfloat16
# One DMA semaphore per double-buffer slot.
COPY_SEMAPHORES = pltpu.SemaphoreType.DMA((NUM_SLOTS,))
PAGE_BUFFERS = pltpu.VMEM((NUM_SLOTS, PAGE_ROWS, HEAD_DIM), PAGE_DTYPE)
