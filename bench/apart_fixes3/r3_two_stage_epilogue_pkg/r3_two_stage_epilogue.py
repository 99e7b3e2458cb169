"""Two-stage epilogue after a matmul: stage 1 scales by a per-column gain, stage 2 adds a bias and
soft-caps. Each stage is its own Mosaic GPU kernel (stage 2 also runs alone in the decode path);
both take their tile and TMA plumbing from `r3_stage_common`.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

import r3_stage_common as common

CAP = 20.0


def _gain_stage(x_gmem, gain_gmem, out_gmem, barrier):
  tile = common.acquire_tile(x_gmem.shape[1], x_gmem.dtype)
  common.load_rows(x_gmem, tile, barrier)
  tile[...] = tile[...] * gain_gmem[...]
  common.store_rows(tile, out_gmem)


def _bias_cap_stage(h_gmem, bias_gmem, out_gmem, barrier, *, cap):
  tile = common.acquire_tile(h_gmem.shape[1], h_gmem.dtype)
  common.load_rows(h_gmem, tile, barrier)
  tile[...] = cap * jnp.tanh((tile[...] + bias_gmem[...]) * (1.0 / cap))
  common.store_rows(tile, out_gmem)


def gain_stage(x, gain):
  return plgpu.kernel(
      _gain_stage,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      **common.launch_params(x.shape[0]),
  )(x, gain.reshape(1, -1))


def bias_cap_stage(h, bias, cap=CAP):
  return plgpu.kernel(
      functools.partial(_bias_cap_stage, cap=cap),
      out_type=jax.ShapeDtypeStruct(h.shape, h.dtype),
      **common.launch_params(h.shape[0]),
  )(h, bias.reshape(1, -1))


@jax.jit
def epilogue(x, gain, bias):
  return bias_cap_stage(gain_stage(x, gain), bias)


def epilogue_reference(x, gain, bias, cap=CAP):
  return cap * jnp.tanh((x * gain + bias) / cap)


def target():
  args = (jax.ShapeDtypeStruct((256, 128), jnp.float32),
          jax.ShapeDtypeStruct((128,), jnp.float32),
          jax.ShapeDtypeStruct((128,), jnp.float32))
  return epilogue, args, "cuda"


if __name__ == "__main__":
  kx, kg, kb = jax.random.split(jax.random.key(8), 3)
  x = 30.0 * jax.random.normal(kx, (256, 128), jnp.float32)
  gain = jax.random.uniform(kg, (128,), jnp.float32)
  bias = jax.random.normal(kb, (128,), jnp.float32)
  print(jnp.max(jnp.abs(epilogue(x, gain, bias) - epilogue_reference(x, gain, bias))))
