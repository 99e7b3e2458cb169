"""A Mosaic GPU matmul (jax's ragged_dot_mgpu shape) whose per-tile loop body hands a get_global WGMMA accumulator
straight to the function that fills it and keeps what that returns (`acc = compute(pl.get_global(plgpu.ACC(...)))`):
the function is run_scoped's body, and run_scoped returns its value, as the author writes it."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 64


def matmul(a, b):
    m, k = a.shape
    _, n = b.shape

    def body(a_gmem, b_gmem, o_gmem):
        @plgpu.nd_loop((m // BLOCK_M * (n // BLOCK_N),), collective_axes="sm")
        def tile_loop(loop_info: plgpu.NDLoopInfo):
            (tile,) = loop_info.index
            mi, ni = tile // (n // BLOCK_N), tile % (n // BLOCK_N)

            def compute(acc_ref):
                plgpu.emit_pipeline(
                    lambda _, a_smem, b_smem: plgpu.wgmma(acc_ref, a_smem, b_smem),
                    grid=(k // BLOCK_K,),
                    in_specs=[plgpu.BlockSpec((BLOCK_M, BLOCK_K), lambda kk: (mi, kk)),
                              plgpu.BlockSpec((BLOCK_K, BLOCK_N), lambda kk: (kk, ni))],
                    max_concurrent_steps=2,
                )(a_gmem, b_gmem)
                return acc_ref[...]

            acc = compute(pl.get_global(plgpu.ACC((BLOCK_M, BLOCK_N))))

            @functools.partial(pl.run_scoped, o_smem=plgpu.SMEM((BLOCK_M, BLOCK_N), jnp.float16))
            def store(o_smem):
                o_smem[...] = acc.astype(o_smem.dtype)
                plgpu.commit_smem()
                plgpu.copy_smem_to_gmem(o_smem, o_gmem.at[pl.ds(mi * BLOCK_M, BLOCK_M), pl.ds(ni * BLOCK_N, BLOCK_N)])
                plgpu.wait_smem_to_gmem(0)

    return plgpu.kernel(
        body,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float16),
        grid=(4,),
        grid_names=("sm",),
        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup),
    )(a, b)


def target():
    a = jax.ShapeDtypeStruct((256, 128), jnp.float16)
    b = jax.ShapeDtypeStruct((128, 256), jnp.float16)
    return matmul, (a, b), "cuda"
