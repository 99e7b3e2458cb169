"""Bucketed clamp of token ids with a per-block phase fence, run in the Pallas interpreter.

Part of a tokenizer post-processing pipeline: ids are folded into ``num_buckets`` buckets
(``id % num_buckets``) and clamped to the vocabulary. Each grid step writes the folded ids into
a VMEM scratch, fences the two phases with a semaphore, then clamps. The kernel runs in
interpret mode when the environment variable ``PALLAS_INTERPRET`` is set (the CI default).
"""

from __future__ import annotations

import dataclasses
import functools
import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=regular_semaphore meaning=preserving

INTERPRET = os.environ.get("PALLAS_INTERPRET", "1") not in ("", "0")


@dataclasses.dataclass(frozen=True)
class BucketConfig:
  num_buckets: int = 7
  vocab_limit: int = 5
  block_rows: int = 8


def _bucket_body(ids_ref, o_ref, folded_ref, phase_sem, *, cfg: BucketConfig):
  folded_ref[...] = ids_ref[...] % cfg.num_buckets
  # Phase fence: the clamp below must see every folded id of the block.
  pl.semaphore_signal(phase_sem)
  pl.semaphore_wait(phase_sem)
  o_ref[...] = jnp.minimum(folded_ref[...], cfg.vocab_limit)


def bucketize(ids: jax.Array, cfg: BucketConfig = BucketConfig()) -> jax.Array:
  rows, cols = ids.shape
  spec = pl.BlockSpec((cfg.block_rows, cols), lambda i: (i, 0))
  return pl.pallas_call(
      functools.partial(_bucket_body, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct(ids.shape, ids.dtype),
      grid=(rows // cfg.block_rows,),
      in_specs=[spec],
      out_specs=spec,
      scratch_shapes=[
          pltpu.VMEM((cfg.block_rows, cols), ids.dtype),
          pltpu.SemaphoreType.DMA,
      ],
      interpret=INTERPRET,
  )(ids)


def _ids():
  return jnp.arange(32 * 128, dtype=jnp.int32).reshape(32, 128)


def target():
  return bucketize, (_ids(),), "interpret"


def expected():
  cfg = BucketConfig()
  return jnp.minimum(_ids() % cfg.num_buckets, cfg.vocab_limit)


def bucket_counts(ids: jax.Array, cfg: BucketConfig = BucketConfig()) -> jax.Array:
  """How many ids land in each clamped bucket (``vocab_limit + 1`` bins)."""
  folded = bucketize(ids, cfg)
  return jnp.bincount(folded.reshape(-1), length=cfg.vocab_limit + 1)


def _report(counts: jax.Array) -> str:
  total = int(jnp.sum(counts))
  return ", ".join(f"{b}: {int(c) / total:.1%}" for b, c in enumerate(counts))


if __name__ == "__main__":
  got = bucketize(_ids())
  print("match:", bool(jnp.array_equal(got, expected())))
  print(_report(bucket_counts(_ids())))
