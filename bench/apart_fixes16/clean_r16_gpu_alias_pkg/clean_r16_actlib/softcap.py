"""tanh soft-capping of attention logits."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from .common import BLOCK_ROWS, row_block as _row_block, stage as _stage


def _softcap_body(cap, x_ref, o_ref, work):
  rows = _row_block()
  work[...] = x_ref[rows, :].astype(jnp.float32) * (1.0 / cap)
  o_ref[rows, :] = (jnp.tanh(work[...]) * cap).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("cap",))
def softcap(x, cap=30.0):
  m, _ = x.shape
  return plgpu.kernel(
      functools.partial(_softcap_body, cap),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // BLOCK_ROWS,),
      grid_names=("rows",),
      scratch_types=[_stage((BLOCK_ROWS, x.shape[-1]))],
  )(x)
