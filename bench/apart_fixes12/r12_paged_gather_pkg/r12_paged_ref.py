"""Reference gather for the paged-KV kernel."""

import jax.numpy as jnp


def paged_gather_ref(page_table, scales, cache, out_dtype):
  pages = cache[page_table]  # [batch, pages_per_seq, page_size, head_dim]
  batch, pps, ps, hd = pages.shape
  dense = pages.reshape(batch, pps * ps, hd).astype(jnp.float32)
  return (dense * scales[:, None, None]).astype(out_dtype)
