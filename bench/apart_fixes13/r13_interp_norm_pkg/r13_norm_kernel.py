"""Mean-centering with an affine epilogue: o = (x - mean(x)) * gamma + beta, per row."""

import jax.numpy as jnp

from r13_norm_workspace import Workspace


def centering_kernel(ws: Workspace, x_ref, g_ref, b_ref, o_ref):
  (centered,) = ws.alloc()
  x = x_ref[...].astype(jnp.float32)
  centered[...] = x - jnp.mean(x, axis=-1, keepdims=True)
  o_ref[...] = (centered[...] * g_ref[...] + b_ref[...]).astype(o_ref.dtype)
