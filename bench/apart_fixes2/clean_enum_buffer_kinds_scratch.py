"""A gated residual add; its shared-memory buffers are Enum members declared as scratch."""
# fix-rate: clean

import enum

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

WIDTH = 256


class Buffers(enum.Enum):
  """Every buffer kind the residual kernels use, in one place."""

  RESIDUAL = plgpu.SMEM((WIDTH,), jnp.float32)
  GATE = plgpu.SMEM((WIDTH,), jnp.float32)

  @property
  def type(self):
    return self.value


VECTOR = jax.ShapeDtypeStruct((WIDTH,), jnp.float32)


def gated_residual_body(x_ref, r_ref, g_ref, out_ref, gate_smem, residual):
  residual[...] = r_ref[...]
  gate_smem[...] = jax.nn.sigmoid(g_ref[...])
  out_ref[...] = x_ref[...] + gate_smem[...] * residual[...]


def gated_residual(x, r, g):
  kernel = plgpu.kernel(
      gated_residual_body,
      out_type=VECTOR,
      scratch_types=[Buffers.GATE.type, Buffers.RESIDUAL.type],
  )
  return kernel(x, r, g)


def reference(x, r, g):
  return x + jax.nn.sigmoid(g) * r


def target():
  return gated_residual, (VECTOR, VECTOR, VECTOR), "cuda"


if __name__ == "__main__":
  keys = jax.random.split(jax.random.key(0), 3)
  x, r, g = (jax.random.normal(k, (WIDTH,), jnp.float32) for k in keys)
  got = jax.jit(gated_residual)(x, r, g)
  np.testing.assert_allclose(got, reference(x, r, g), rtol=1e-5, atol=1e-6)
  print("gated residual ok")
