"""Driver: run the registered SwiGLU for a model's MLP width and compare with the reference.

    python r14_swiglu_main.py --hidden 1024 --dtype bfloat16 --platform pallas
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np

import r14_swiglu_interface  # noqa: F401  (registers the Pallas GPU kernel)
import r14_swiglu_ref  # noqa: F401  (registers the XLA fallback)
from r14_swiglu_registry import Backend, Platform, kernel_registry


def parse_args(argv=None) -> argparse.Namespace:
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--hidden", type=int, default=1024)
  p.add_argument("--block", type=int, default=256)
  p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
  p.add_argument("--platform", default="pallas", choices=[p.value for p in Platform])
  return p.parse_args(argv)


def build(args: argparse.Namespace):
  impl = kernel_registry.get("swiglu", Platform(args.platform), Backend.GPU)
  return jax.jit(functools.partial(impl, block=args.block))


def target():
  args = parse_args([])
  shape = jax.ShapeDtypeStruct((args.hidden,), jnp.dtype(args.dtype))
  return build(args), (shape, shape), "cuda"


def main(argv=None):
  args = parse_args(argv)
  key_g, key_u = jax.random.split(jax.random.key(0))
  gate = jax.random.normal(key_g, (args.hidden,), jnp.dtype(args.dtype))
  up = jax.random.normal(key_u, (args.hidden,), jnp.dtype(args.dtype))
  got = build(args)(gate, up)
  want = kernel_registry.get("swiglu", Platform.XLA, Backend.ANY)(gate, up)
  np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=2e-2)
  print("swiglu ok", got.shape, got.dtype)


if __name__ == "__main__":
  main()
