"""TPU tests of the row-statistics op (run by the TPU CI job with pytest)."""
# fix-rate: clean

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from clean_r14_rowstats_ops import RowStatsConfig, get_default_config, row_stats
from clean_r14_rowstats_ref import row_stats_reference

SHAPES = [(64, 1024), (32, 512), (256, 4096)]
DTYPES = ["float32", "bfloat16"]


def _check(rows, cols, dtype):
  x = jax.random.normal(jax.random.key(rows + cols), (rows, cols), jnp.dtype(dtype))
  mean, var = row_stats(x)
  want_mean, want_var = row_stats_reference(x)
  np.testing.assert_allclose(np.asarray(mean), np.asarray(want_mean), atol=1e-3)
  np.testing.assert_allclose(np.asarray(var), np.asarray(want_var), atol=1e-2)


def test_default_configs_cover_tuned_shapes():
  assert get_default_config(64, 1024).block_cols == 512
  assert get_default_config(8, 8) == RowStatsConfig()


def test_row_stats_all_shapes():
  for rows, cols in SHAPES:
    for dtype in DTYPES:
      _check(rows, cols, dtype)


def target():
  return functools.partial(row_stats), (jax.ShapeDtypeStruct((64, 1024), jnp.bfloat16),), "tpu"
