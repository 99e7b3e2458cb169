"""Producer/consumer pair of Mosaic GPU kernels: normalise-by-max, then apply a residual.

The caller allocates the `ready` semaphore with `plgpu.alloc_semaphore()` and hands it to both
kernels; `produce` returns `{"scaled": ..., "ready": ...}` (the semaphore passed through, not a
kernel output), and the consumer waits on `outs["ready"]` before it reads `outs["scaled"]`.
"""
# fix-rate: clean

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def _producer_body(x_gmem, inv_scale_gmem, scaled_gmem, ready_sem):
  scaled_gmem[...] = x_gmem[...] * inv_scale_gmem[...]
  pl.semaphore_signal(ready_sem)


def _consumer_body(scaled_gmem, ready_sem, residual_gmem, out_gmem):
  pl.semaphore_wait(ready_sem)
  out_gmem[...] = scaled_gmem[...] + residual_gmem[...]


def produce(x, inv_scale, ready):
  out_type = {"scaled": jax.ShapeDtypeStruct(x.shape, x.dtype)}
  # Body parameters follow the pytree order of out_type: dict keys sorted.
  def body(x_gmem, inv_scale_gmem, ready_sem, scaled_gmem):
    _producer_body(x_gmem, inv_scale_gmem, scaled_gmem, ready_sem)

  return dict(plgpu.kernel(body, out_type=out_type)(x, inv_scale, ready), ready=ready)


def consume(outs, residual):
  return plgpu.kernel(
      _consumer_body,
      out_type=jax.ShapeDtypeStruct(residual.shape, residual.dtype),
  )(outs["scaled"], outs["ready"], residual)


@jax.jit
def scale_and_add(x, residual):
  inv_scale = jnp.broadcast_to(1.0 / jnp.max(jnp.abs(x)), x.shape)
  outs = produce(x, inv_scale, plgpu.alloc_semaphore())
  return consume(outs, residual)


def reference(x, residual):
  return x / jnp.max(jnp.abs(x)) + residual


def target():
  spec = jax.ShapeDtypeStruct((128, 256), jnp.float32)
  return scale_and_add, (spec, spec), "cuda"


if __name__ == "__main__":
  kx, kr = jax.random.split(jax.random.key(5))
  x = jax.random.normal(kx, (128, 256), jnp.float32)
  r = jax.random.normal(kr, (128, 256), jnp.float32)
  print(jnp.max(jnp.abs(scale_and_add(x, r) - reference(x, r))))
