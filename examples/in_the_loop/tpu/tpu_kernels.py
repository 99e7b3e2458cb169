"""TPU kernels that a test file reaches: `pallas-lsp check --trace examples/in_the_loop/tpu` runs
`test_tpu_kernels.py`, and JAX lowers every launch for a TPU (and compiles it where one is attached).
`doubled` is correct; `counted` asks `pl.get_global` for a semaphore, which a TPU TensorCore cannot
lower (PAL003, confirmed by JAX)."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def doubled(x):
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params=pltpu.CompilerParams())(x)


def counted(x):
    def body(x_ref, o_ref):
        sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
        o_ref[...] = x_ref[...]
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(1,),
                          compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)))(x)
