"""Chunked HBM-to-HBM scaled copy, driven by ``pl.loop`` (TPU).

Used to re-scale a quantised checkpoint shard in place on the device: both input and output
stay in HBM, each chunk goes HBM -> VMEM -> (scaled) -> HBM with two manual DMAs. The chunk
count comes from the shard's row count and the per-generation chunk size table.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=scratch meaning=preserving

CHUNK_ROWS = {"v5e": 128, "v6e": 256}


def _rescale_body(x_hbm, o_hbm, buf, *, chunk_rows: int, num_chunks: int, scale: float):

  @pl.loop(0, num_chunks)
  def _chunk(c):
    rows = pl.ds(c * chunk_rows, chunk_rows)
    sems = pl.get_global(pltpu.SemaphoreType.DMA((2,)))  # [load, store]
    load = pltpu.make_async_copy(x_hbm.at[rows], buf, sems.at[0])
    load.start()
    load.wait()
    buf[...] = buf[...] * scale
    store = pltpu.make_async_copy(buf, o_hbm.at[rows], sems.at[1])
    store.start()
    store.wait()


@functools.partial(jax.jit, static_argnames=("scale", "chip"))
def rescale_shard(x: jax.Array, scale: float = 0.5, chip: str = "v5e") -> jax.Array:
  chunk_rows = CHUNK_ROWS[chip]
  rows, cols = x.shape
  body = functools.partial(_rescale_body, chunk_rows=chunk_rows, num_chunks=rows // chunk_rows, scale=scale)
  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pl.ANY),
      scratch_shapes=[pltpu.VMEM((chunk_rows, cols), x.dtype)],
  )(x)


def target():
  return rescale_shard, (jax.ShapeDtypeStruct((512, 128), jnp.float32),), "tpu"


def rescale_reference(x: jax.Array, scale: float = 0.5) -> jax.Array:
  return x * scale


def _check_shard(x: jax.Array, chip: str) -> None:
  """The shard must split into whole chunks for ``chip``; partial chunks are not supported."""
  chunk_rows = CHUNK_ROWS.get(chip)
  if chunk_rows is None:
    raise ValueError(f"unknown chip {chip!r}; known: {sorted(CHUNK_ROWS)}")
  if x.shape[0] % chunk_rows:
    raise ValueError(f"{x.shape[0]} rows do not split into chunks of {chunk_rows}")


def rescale_checkpoint(shards: dict[str, jax.Array], scale: float, chip: str = "v5e") -> dict[str, jax.Array]:
  """Rescales every 2-D shard of a checkpoint; other leaves are returned unchanged."""
  out = {}
  for name, shard in shards.items():
    if shard.ndim != 2:
      out[name] = shard
      continue
    _check_shard(shard, chip)
    out[name] = rescale_shard(shard, scale=scale, chip=chip)
  return out


if __name__ == "__main__":
  import argparse

  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--rows", type=int, default=512)
  parser.add_argument("--scale", type=float, default=0.5)
  parser.add_argument("--chip", default="v5e", choices=sorted(CHUNK_ROWS))
  args = parser.parse_args()
  x = jnp.ones((args.rows, 128), jnp.float32)
  got = rescale_checkpoint({"w": x}, args.scale, args.chip)["w"]
  print("max error:", float(jnp.max(jnp.abs(got - rescale_reference(x, args.scale)))))
