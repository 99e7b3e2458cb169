"""Two-CTA cluster rescale: the second CTA's half is published before the first finishes.

The ``(2 * half, d)`` input is split between the two CTAs of a cluster. Each CTA
scales its half; CTA 1 then raises a flag and CTA 0 waits on it, so that once
CTA 0 retires the whole output is in global memory (the fused all-reduce that
follows this kernel in the model relies on it).

Kernels are looked up by name in ``KERNELS`` the way the ejkernel registries do,
each entry carrying its launch geometry.
"""

# fix-rate: kind=get_global meaning=preserving

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

CLUSTER_AXIS = "pair"


@dataclasses.dataclass(frozen=True)
class KernelSpec:
  name: str
  builder: Callable[..., Callable[[jax.Array, float], jax.Array]]
  cluster_size: int = 2


KERNELS: dict[str, KernelSpec] = {}


def register(name: str, cluster_size: int = 2):
  def wrap(builder):
    KERNELS[name] = KernelSpec(name, builder, cluster_size)
    return builder

  return wrap


def _rescale_body(x_gmem, o_gmem, half_smem, loaded, *, half: int, scale: float):
  cta = jax.lax.axis_index(CLUSTER_AXIS)
  rows = pl.ds(cta * half, half)

  def with_flag(published):
    plgpu.copy_gmem_to_smem(x_gmem.at[rows], half_smem, loaded)
    plgpu.barrier_wait(loaded)
    half_smem[...] = half_smem[...] * scale
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(half_smem, o_gmem.at[rows])
    plgpu.wait_smem_to_gmem(0)

    @pl.when(cta == 1)
    def _():
      pl.semaphore_signal(published, 1)

    @pl.when(cta == 0)
    def _():
      pl.semaphore_wait(published, 1)

  # The flag is shared by both CTAs of the cluster.
  pl.run_scoped(
      with_flag, plgpu.SemaphoreType.REGULAR, collective_axes=CLUSTER_AXIS
  )


@register("cluster_rescale")
def build_cluster_rescale(shape: tuple[int, int], dtype, cluster_size: int = 2):
  rows, d = shape
  half = rows // cluster_size

  def launch(x, scale: float):
    return plgpu.kernel(
        functools.partial(_rescale_body, half=half, scale=scale),
        out_type=jax.ShapeDtypeStruct(shape, dtype),
        scratch_types=[plgpu.SMEM((half, d), dtype), plgpu.Barrier()],
        cluster=(cluster_size,),
        cluster_names=(CLUSTER_AXIS,),
    )(x)

  return launch


def get_kernel(name: str, shape, dtype):
  spec = KERNELS[name]
  return spec.builder(shape, dtype, cluster_size=spec.cluster_size)


def target():
  kernel = get_kernel("cluster_rescale", (128, 128), jnp.float32)
  return (
      lambda x: kernel(x, 0.5),
      (jax.ShapeDtypeStruct((128, 128), jnp.float32),),
      "cuda",
  )


if __name__ == "__main__":
  kernel = jax.jit(lambda x: get_kernel("cluster_rescale", x.shape, x.dtype)(x, 0.5))
  print(kernel(jnp.ones((128, 128), jnp.float32))[::64, 0])
