"""A module-level producer kernel returning an array of flags, one per consumer, that the caller unpacks and
hands to two consumer launches: the caller allocates the flags with plgpu.alloc_semaphore (its shape as
written) and passes them to the producer too.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROW = jax.ShapeDtypeStruct((128,), jnp.float32)
READERS = 2


def produce_body(x_ref, flags_ref, y_ref):
    y_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(flags_ref.at[0])
    pl.semaphore_signal(flags_ref.at[1])


def first_body(flags_ref, y_ref, o_ref):
    pl.semaphore_wait(flags_ref.at[0])
    o_ref[...] = y_ref[...] + 1.0


def second_body(flags_ref, y_ref, o_ref):
    pl.semaphore_wait(flags_ref.at[1])
    o_ref[...] = y_ref[...] - 1.0


producer = plgpu.kernel(produce_body, out_type=ROW)
first = plgpu.kernel(first_body, out_type=ROW)
second = plgpu.kernel(second_body, out_type=ROW)


def run(x):
    flags = plgpu.alloc_semaphore((READERS,))
    y = producer(x, flags)
    return first(flags, y), second(flags, y)


def target():
    return run, (ROW,), "cuda"
