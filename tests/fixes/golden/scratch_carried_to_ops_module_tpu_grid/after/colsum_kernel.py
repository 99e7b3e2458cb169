"""TPU kernel module: a column sum over row blocks, its f32 accumulator shaped by the block a table picks."""
import jax.numpy as jnp
from jax.experimental import pallas as pl


def colsum_kernel(x_ref, o_ref, acc, *, block_cols):
  r = pl.program_id(1)

  @pl.when(r == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += jnp.sum(x_ref[...].reshape(-1, 8, block_cols), axis=0)

  @pl.when(r == pl.num_programs(1) - 1)
  def _():
    o_ref[...] = acc[...]
