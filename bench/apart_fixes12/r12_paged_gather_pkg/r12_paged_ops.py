"""Front end of the paged-KV gather: shape checks, config, dispatch (kernel or reference)."""
# fix-rate: kind=scratch_grid_spec meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from r12_paged_kernel import GatherConfig, gather_grid_spec, paged_gather_kernel
from r12_paged_ref import paged_gather_ref


def get_default_config(page_table: jax.Array, cache: jax.Array) -> GatherConfig:
  _, page_size, head_dim = cache.shape
  return GatherConfig(pages_per_seq=page_table.shape[1], page_size=page_size, head_dim=head_dim)


@functools.partial(jax.jit, static_argnames=("out_dtype", "use_reference"))
def paged_gather(page_table, scales, cache, out_dtype=jnp.bfloat16, use_reference=False):
  if use_reference:
    return paged_gather_ref(page_table, scales, cache, out_dtype)
  cfg = get_default_config(page_table, cache)
  batch = page_table.shape[0]
  return pl.pallas_call(
      functools.partial(paged_gather_kernel, cfg=cfg),
      grid_spec=gather_grid_spec(cfg, batch, cache.dtype),
      out_shape=jax.ShapeDtypeStruct((batch, cfg.pages_per_seq * cfg.page_size, cfg.head_dim), out_dtype),
  )(page_table, scales, cache)


def target():
  table = jax.ShapeDtypeStruct((4, 8), jnp.int32)
  scales = jax.ShapeDtypeStruct((4,), jnp.float32)
  cache = jax.ShapeDtypeStruct((64, 16, 128), jnp.bfloat16)
  return paged_gather, (table, scales, cache), "tpu"
