"""NumPy reference of the KV-cache quantizer (float32 throughout, like the kernel)."""

import numpy as np


def quantize_kv_reference(kv: np.ndarray):
  wide = kv.astype(np.float32)
  absmax = np.max(np.abs(wide), axis=1, keepdims=True)
  scale = np.maximum(absmax, np.float32(1e-6)) / np.float32(127.0)
  return np.round(wide / scale).astype(np.int8), scale
