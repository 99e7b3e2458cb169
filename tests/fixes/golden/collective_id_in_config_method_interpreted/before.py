"""A gated residual that meets its peers on the barrier semaphore, run by the TPU interpreter; its compiler
parameters come from a method of its config dataclass, which gives no collective_id."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GateConfig:
  block_rows: int = 8
  vmem_mib: int = 16

  def compiler_params(self):
    return pltpu.CompilerParams(vmem_limit_bytes=self.vmem_mib * 1024 * 1024,
                                dimension_semantics=("parallel",))


def _gate_body(x_ref, g_ref, o_ref):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  o_ref[...] = x_ref[...] * g_ref[...]


def gate(x, g, cfg=GateConfig()):
  spec = pl.BlockSpec((cfg.block_rows, x.shape[1]), lambda i: (i, 0))
  return pl.pallas_call(
      _gate_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // cfg.block_rows,),
      in_specs=[spec, spec],
      out_specs=spec,
      compiler_params=cfg.compiler_params(),
      interpret=pltpu.InterpretParams(),
  )(x, g)


def _inputs():
  x = np.arange(16 * 128, dtype=np.float32).reshape(16, 128) % 5
  return jnp.asarray(x), jnp.full((16, 128), 0.5, jnp.float32)


def target():
  return gate, _inputs(), "interpret"


def expected():
  x, g = _inputs()
  return x * g
