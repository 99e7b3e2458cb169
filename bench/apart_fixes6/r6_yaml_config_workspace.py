"""Column sums with a cross-block workspace, configured from the experiment's YAML block.

Each block sums its row slab of every input into one row of a float32 workspace in global memory,
signals the shared counter, and block 0, once all peers have reported, folds the workspace into the
final column sums.  The launch parameters come from the same YAML snippet the training config
embeds (parsed here with a tiny reader, since the kernels package must not depend on PyYAML), and
`launch(*operands)` accepts any number of same-shaped inputs, summed together.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=output meaning=preserving

KERNEL_YAML = """
colsum:
  blocks: 4
  lanes: 128
  accumulate_dtype: float32
"""


def parse_block(text: str, section: str) -> dict[str, object]:
  """`key: value` lines under `section:`; integers are converted, the rest stay strings."""
  out: dict[str, object] = {}
  inside = False
  for line in text.splitlines():
    if not line.strip():
      continue
    if not line.startswith(" "):
      inside = line.rstrip(":") == section
      continue
    if inside:
      key, value = (part.strip() for part in line.split(":", 1))
      out[key] = int(value) if value.isdigit() else value
  return out


CONFIG = parse_block(KERNEL_YAML, "colsum")


def _colsum_body(*refs, num_inputs: int, rows_per_block: int, blocks: int, acc_dtype):
  inputs, (out_gmem,) = refs[:num_inputs], refs[num_inputs:]
  lanes = out_gmem.shape[0]
  block = jax.lax.axis_index("slab")
  workspace = pl.get_global(plgpu.GMEM((blocks, lanes), acc_dtype))
  reported = pl.get_global(plgpu.SemaphoreType.REGULAR)

  acc = jnp.zeros((lanes,), acc_dtype)
  for x_gmem in inputs:
    for r in range(rows_per_block):
      acc += x_gmem[block * rows_per_block + r].astype(acc_dtype)
  workspace[block] = acc

  @pl.when(block != 0)
  def _report():
    pl.semaphore_signal(reported, 1)

  @pl.when(block == 0)
  def _fold():
    pl.semaphore_wait(reported, blocks - 1)
    total = jnp.zeros((lanes,), acc_dtype)
    for b in range(blocks):
      total += workspace[b]
    out_gmem[...] = total.astype(out_gmem.dtype)


def launch(*operands: jax.Array, config: dict[str, object] = CONFIG) -> jax.Array:
  rows, lanes = operands[0].shape
  blocks = int(config["blocks"])
  if lanes != config["lanes"] or rows % blocks:
    raise ValueError(f"operands of shape {operands[0].shape} do not fit {config}")
  kernel = plgpu.kernel(
      functools.partial(_colsum_body, num_inputs=len(operands), rows_per_block=rows // blocks,
                        blocks=blocks, acc_dtype=jnp.dtype(str(config["accumulate_dtype"]))),
      out_type=jax.ShapeDtypeStruct((lanes,), operands[0].dtype),
      grid=(blocks,),
      grid_names=("slab",),
  )
  return kernel(*operands)


def target():
  spec = jax.ShapeDtypeStruct((16, 128), jnp.float32)
  return launch, (spec, spec, spec), "cuda"


if __name__ == "__main__":
  a = jnp.ones((16, 128))
  print(launch(a, 2 * a, 3 * a)[:4])
