"""Row-blocked projection with pluggable epilogues (bias, residual, quantisation probes).

Research code passes epilogues as callbacks typed by a `typing.Protocol`; the kernel calls
`epilogue(acc, row_slice, *extra_refs)` after the elementwise projection. `ResidualScaleEpilogue`
stages the scaled accumulator in shared memory before adding the residual stream.
"""
# fix-rate: kind=scratch meaning=preserving

import functools
from typing import Protocol

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_M = 64
WIDTH = 128


class Epilogue(Protocol):
  num_extra_inputs: int

  def __call__(self, acc, rows, o_ref, *extra_refs) -> None:
    ...


class BiasEpilogue:
  num_extra_inputs = 1

  def __call__(self, acc, rows, o_ref, bias_ref):
    o_ref[rows, :] = acc + bias_ref[rows, :]


class ResidualScaleEpilogue:
  num_extra_inputs = 1

  def __init__(self, scale: float):
    self.scale = scale

  def __call__(self, acc, rows, o_ref, residual_ref):
    staged = pl.get_global(plgpu.SMEM((BLOCK_M, WIDTH), jnp.float32))
    staged[...] = acc * self.scale
    o_ref[rows, :] = staged[...] + residual_ref[rows, :]


def _project_body(x_ref, w_ref, *refs, epilogue: Epilogue):
  extra_refs, o_ref = refs[:-1], refs[-1]
  rows = pl.ds(jax.lax.axis_index("m") * BLOCK_M, BLOCK_M)
  acc = x_ref[rows, :] * w_ref[rows, :]
  epilogue(acc, rows, o_ref, *extra_refs)


def project(x, w, *extra, epilogue: Epilogue):
  assert len(extra) == epilogue.num_extra_inputs
  return plgpu.kernel(
      functools.partial(_project_body, epilogue=epilogue),
      out_type=jax.ShapeDtypeStruct(x.shape, jnp.float32),
      grid=(x.shape[0] // BLOCK_M,),
      grid_names=("m",),
  )(x, w, *extra)


def residual_branch(x, w, residual):
  return project(x, w, residual, epilogue=ResidualScaleEpilogue(0.5))


def target():
  spec = jax.ShapeDtypeStruct((256, WIDTH), jnp.float32)
  return residual_branch, (spec, spec, spec), "cuda"


if __name__ == "__main__":
  x = jnp.ones((256, WIDTH))
  print(jax.jit(residual_branch)(x, x, x)[0, 0])
  print(jax.jit(functools.partial(project, epilogue=BiasEpilogue()))(x, x, x)[0, 0])
