"""A helper arrives on and waits for a "barrier" the body took from get_global."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def sync(barrier):
    plgpu.barrier_arrive(barrier)
    plgpu.barrier_wait(barrier)


def body(x_ref, o_ref, barrier_ref):
    o_ref[...] = x_ref[...] + 1.0
    sync(barrier_ref)


def target():
    return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.Barrier()]), (X,), "cuda"
