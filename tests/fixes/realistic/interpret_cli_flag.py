"""A benchmark script whose --interpret flag runs the kernel on the CPU; the kernel uses a global semaphore."""
# fix-rate: kind=interpret meaning=preserving
import argparse

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def make_kernel(interpret=False):
    def body(x_ref, o_ref):
        turn = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(turn)
        pl.semaphore_wait(turn)
        o_ref[...] = x_ref[...] - 1.0

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32), interpret=interpret)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--interpret", action="store_true")
    args = parser.parse_args(argv)
    print(make_kernel(args.interpret)(jnp.ones((128,), jnp.float32)))


def target():
    return make_kernel(interpret=True), (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
    return jnp.zeros((128,), jnp.float32)


if __name__ == "__main__":
    main()
