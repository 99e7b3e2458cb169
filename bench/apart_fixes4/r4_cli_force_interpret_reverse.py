"""Block-reversed scaled copy (the time-reversal step of a bidirectional scan), with a small CLI.

`--interpret` (or a host without a TPU) runs the kernel under the TPU interpreter, switched on for the
whole run with `pltpu.force_tpu_interpret_mode()`, so the launch itself is written exactly as on a TPU.
"""
# fix-rate: kind=scratch meaning=preserving

import argparse
import contextlib
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ReverseConfig:
  block_rows: int = 8
  lanes: int = 128
  scale: float = 2.0


def _reverse_kernel(x_hbm, o_ref, staging_ref, *, cfg: ReverseConfig):
  step = pl.program_id(0)
  src_block = pl.num_programs(0) - 1 - step
  dma_sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(
      x_hbm.at[pl.ds(src_block * cfg.block_rows, cfg.block_rows)], staging_ref, dma_sem)
  copy.start()
  copy.wait()
  o_ref[...] = staging_ref[...] * cfg.scale


def block_reverse(x: jax.Array, cfg: ReverseConfig = ReverseConfig()) -> jax.Array:
  rows = x.shape[0]
  return pl.pallas_call(
      functools.partial(_reverse_kernel, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // cfg.block_rows,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((cfg.block_rows, cfg.lanes), lambda i: (i, 0)),
      scratch_shapes=[pltpu.VMEM((cfg.block_rows, cfg.lanes), x.dtype)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


def interpreter_context(force: bool):
  """The TPU interpreter when asked for, or when there is no TPU to run on."""
  if force or jax.default_backend() != "tpu":
    return pltpu.force_tpu_interpret_mode()
  return contextlib.nullcontext()


def _example(rows: int = 64, lanes: int = 128):
  return jnp.arange(rows * lanes, dtype=jnp.float32).reshape(rows, lanes)


def reference(x, cfg: ReverseConfig = ReverseConfig()):
  blocks = x.reshape(-1, cfg.block_rows, x.shape[1])
  return (blocks[::-1] * cfg.scale).reshape(x.shape)


def _run_interpreted(x):
  with interpreter_context(force=True):
    return block_reverse(x)


def target():
  return _run_interpreted, (_example(),), "interpret"


def expected():
  return reference(_example())


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--rows", type=int, default=64)
  parser.add_argument("--interpret", action="store_true")
  args = parser.parse_args(argv)
  x = _example(args.rows)
  with interpreter_context(args.interpret):
    got = jax.block_until_ready(block_reverse(x))
  np.testing.assert_allclose(np.asarray(got), np.asarray(reference(x)))
  print(f"ok: {args.rows} rows on {jax.default_backend()}")


if __name__ == "__main__":
  main()
