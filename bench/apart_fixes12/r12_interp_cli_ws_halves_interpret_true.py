"""Warp-specialized residual scale (Mosaic GPU): two warpgroups each own half of the rows.

`python r12_interp_cli_ws_halves_interpret_true.py --rows 16 --cols 128 --interpret` checks the kernel
on a CPU against NumPy; without `--interpret` it runs compiled on the GPU.
"""
# fix-rate: kind=interpret_params meaning=preserving

from __future__ import annotations

import argparse
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

NUM_WARPGROUPS = 2


@dataclasses.dataclass(frozen=True)
class HalvesConfig:
  rows: int
  cols: int
  alpha: float = 0.5

  @property
  def half(self) -> tuple[int, int]:
    return (self.rows // NUM_WARPGROUPS, self.cols)

  def scratch_types(self, dtype):
    return [plgpu.SMEM((NUM_WARPGROUPS, *self.half), dtype),
            plgpu.SMEM((NUM_WARPGROUPS, *self.half), dtype),
            plgpu.Barrier(num_arrivals=2, num_barriers=NUM_WARPGROUPS)]


def _halves_body(x_gmem, r_gmem, o_gmem, x_smem, r_smem, loaded, *, cfg: HalvesConfig):
  wg = jax.lax.axis_index("wg")
  rows = pl.ds(wg * cfg.half[0], cfg.half[0])
  plgpu.copy_gmem_to_smem(x_gmem.at[rows], x_smem.at[wg], loaded.at[wg])
  plgpu.copy_gmem_to_smem(r_gmem.at[rows], r_smem.at[wg], loaded.at[wg])
  plgpu.barrier_wait(loaded.at[wg])
  x_smem[wg] = r_smem[wg] + cfg.alpha * x_smem[wg]
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(x_smem.at[wg], o_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)


def residual_scale(x, residual, *, alpha=0.5, interpret=False):
  cfg = HalvesConfig(*x.shape, alpha=alpha)
  return plgpu.kernel(
      functools.partial(_halves_body, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=cfg.scratch_types(x.dtype),
      num_threads=NUM_WARPGROUPS,
      thread_name="wg",
      interpret=interpret,
  )(x, residual)


def _inputs(rows=16, cols=128):
  x = jnp.arange(rows * cols, dtype=jnp.float32).reshape(rows, cols) % 13
  r = jnp.ones((rows, cols), jnp.float32) * 2
  return x, r


def expected():
  x, r = (np.asarray(a) for a in _inputs())
  return r + 0.5 * x


def target():
  return functools.partial(residual_scale, interpret=True), _inputs(), "interpret"


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--rows", type=int, default=16)
  parser.add_argument("--cols", type=int, default=128)
  parser.add_argument("--interpret", action="store_true")
  args = parser.parse_args(argv)
  x, r = _inputs(args.rows, args.cols)
  got = jax.jit(functools.partial(residual_scale, interpret=args.interpret))(x, r)
  np.testing.assert_array_equal(np.asarray(got), np.asarray(r + 0.5 * x))
  print("ok")


if __name__ == "__main__":
  main()
