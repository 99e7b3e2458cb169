"""Public SwiGLU entry point, registered for Pallas on GPU."""

from __future__ import annotations

import dataclasses

import jax

from r14_swiglu_impl import swiglu_fwd_gpu
from r14_swiglu_registry import Backend, Platform, kernel_registry


@dataclasses.dataclass(frozen=True)
class FwdParams:
  block: int = 256


@kernel_registry.register("swiglu", Platform.PALLAS, Backend.GPU)
def swiglu(gate: jax.Array, up: jax.Array, *, block: int = 256) -> jax.Array:
  if gate.shape != up.shape:
    raise ValueError(f"gate {gate.shape} and up {up.shape} differ")
  params = FwdParams(block=min(block, gate.shape[0]))
  return swiglu_fwd_gpu(gate, up, params.block)
