"""Logit soft-capping (cap * tanh(x / cap)) as a Mosaic GPU kernel, with a CLI for CI hosts.

Each block of rows is staged in shared memory before the tanh. `--interpret` (and any host without a
GPU) runs it under the GPU interpreter, with `plgpu.InterpretGPUParams` so that races are detected.
"""
# fix-rate: kind=scratch meaning=preserving

import argparse
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class SoftcapConfig:
  rows: int = 256
  cols: int = 128
  block_rows: int = 64
  cap: float = 30.0

  @property
  def num_blocks(self) -> int:
    return self.rows // self.block_rows


def _softcap_body(x_gmem, o_gmem, *, cfg: SoftcapConfig):
  block = jax.lax.axis_index("blocks")
  rows = pl.ds(block * cfg.block_rows, cfg.block_rows)
  tile = pl.get_global(plgpu.SMEM((cfg.block_rows, cfg.cols), jnp.float32))
  tile[...] = x_gmem[rows, :]
  o_gmem[rows, :] = cfg.cap * jnp.tanh(tile[...] / cfg.cap)


def make_softcap(cfg: SoftcapConfig, interpret=False):
  return plgpu.kernel(
      functools.partial(_softcap_body, cfg=cfg),
      out_type=jax.ShapeDtypeStruct((cfg.rows, cfg.cols), jnp.float32),
      grid=(cfg.num_blocks,),
      grid_names=("blocks",),
      interpret=interpret,
  )


def choose_interpret(flag: bool):
  if flag or jax.default_backend() != "gpu":
    return plgpu.InterpretGPUParams(detect_races=True)
  return False


CFG = SoftcapConfig()


def _logits(cfg: SoftcapConfig = CFG):
  return jnp.linspace(-100.0, 100.0, cfg.rows * cfg.cols, dtype=jnp.float32).reshape(cfg.rows, cfg.cols)


def target():
  return make_softcap(CFG, interpret=choose_interpret(flag=True)), (_logits(),), "interpret"


def expected():
  return CFG.cap * jnp.tanh(_logits() / CFG.cap)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--interpret", action="store_true", help="run in the GPU interpreter")
  parser.add_argument("--cap", type=float, default=CFG.cap)
  args = parser.parse_args(argv)
  cfg = dataclasses.replace(CFG, cap=args.cap)
  softcap = jax.jit(make_softcap(cfg, interpret=choose_interpret(args.interpret)))
  x = _logits(cfg)
  got = softcap(x)
  np.testing.assert_allclose(np.asarray(got), np.asarray(cfg.cap * jnp.tanh(x / cfg.cap)), rtol=1e-5)
  print("softcap ok", got.shape)


if __name__ == "__main__":
  main()
