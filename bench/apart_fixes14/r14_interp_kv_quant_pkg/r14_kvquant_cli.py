"""Check the KV-cache quantizer against the NumPy reference.

    python r14_kvquant_cli.py --platform cpu      # TPU interpreter on the host
    python r14_kvquant_cli.py --platform tpu
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import argparse
import functools

import jax.numpy as jnp
import numpy as np

from r14_kvquant_ops import KVQuantConfig, quantize_kv
from r14_kvquant_ref import quantize_kv_reference

ROWS, HEAD_DIM = 32, 128


def _calibration_kv() -> np.ndarray:
  """Quarter steps in [-31.75, 31.75], each row reaching 31.75: scales are exactly 0.25."""
  kv = ((np.arange(ROWS * HEAD_DIM, dtype=np.float32).reshape(ROWS, HEAD_DIM) % 255) - 127.0) / 4.0
  kv[:, 0] = 31.75
  return kv


_KV = _calibration_kv()


def config_for(argv=None) -> KVQuantConfig:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--platform", choices=["cpu", "tpu"], default="cpu")
  parser.add_argument("--block-rows", type=int, default=8)
  args = parser.parse_args(argv)
  return KVQuantConfig(block_rows=args.block_rows, interpret=args.platform == "cpu")


def expected():
  q, _ = quantize_kv_reference(_KV)
  return q


def target():
  cfg = config_for([])
  return (lambda kv: quantize_kv(kv, config=cfg)[0]), (jnp.asarray(_KV),), "interpret"


def main(argv=None):
  cfg = config_for(argv)
  q, scale = quantize_kv(jnp.asarray(_KV), config=cfg)
  want_q, want_scale = quantize_kv_reference(_KV)
  np.testing.assert_array_equal(np.asarray(q), want_q)
  np.testing.assert_allclose(np.asarray(scale)[:, :1], want_scale)
  print("kv quant ok", functools.reduce(lambda a, b: a * b, q.shape))


if __name__ == "__main__":
  main()
