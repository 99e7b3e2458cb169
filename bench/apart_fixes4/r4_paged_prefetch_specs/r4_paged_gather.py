"""Sums the pages a token's page table points at (a paged "sum pooling" used by the retrieval head).

The grid spec comes from `r4_paged_specs`; the f32 running sum lives in VMEM across the page axis.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import r4_paged_specs as specs


def _paged_sum_kernel(page_table_ref, pages_ref, out_ref, *, pages_per_token: int):
  del page_table_ref  # consumed by the index maps
  page = pl.program_id(1)
  acc_ref = pl.get_global(pltpu.VMEM(out_ref.shape, jnp.float32))

  @pl.when(page == 0)
  def _init():
    acc_ref[...] = jnp.zeros_like(acc_ref)

  acc_ref[...] += pages_ref[...].astype(jnp.float32)

  @pl.when(page == pages_per_token - 1)
  def _flush():
    out_ref[...] = acc_ref[...].astype(out_ref.dtype)


class PagedSum:
  """Callable holding a config; one instance per model layer."""

  def __init__(self, cfg: specs.GatherConfig):
    self.cfg = cfg

  def __call__(self, page_table: jax.Array, pages: jax.Array) -> jax.Array:
    cfg = self.cfg
    kernel = functools.partial(_paged_sum_kernel, pages_per_token=cfg.pages_per_token)
    return pl.pallas_call(
        kernel,
        grid_spec=specs.make_gather_spec(cfg),
        out_shape=jax.ShapeDtypeStruct((cfg.out_rows, cfg.width), pages.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(page_table, pages)


def reference(page_table, pages, cfg: specs.GatherConfig):
  blocks = pages.reshape(-1, cfg.page_rows, cfg.width)
  return blocks[page_table].astype(jnp.float32).sum(axis=1).reshape(cfg.out_rows, cfg.width)


def target():
  cfg = specs.DEFAULT_CONFIG
  op = PagedSum(cfg)
  table = jax.ShapeDtypeStruct((cfg.num_tokens, cfg.pages_per_token), jnp.int32)
  pages = jax.ShapeDtypeStruct((32 * cfg.page_rows, cfg.width), jnp.bfloat16)
  return op, (table, pages), "tpu"


if __name__ == "__main__":
  cfg = specs.DEFAULT_CONFIG
  table = jax.random.randint(jax.random.key(1), (cfg.num_tokens, cfg.pages_per_token), 0, 32)
  pages = jax.random.normal(jax.random.key(2), (32 * cfg.page_rows, cfg.width), jnp.bfloat16)
  print(PagedSum(cfg)(table, pages).shape, reference(table, pages, cfg).shape)
