"""A plgpu.kernel's store helper (jax-linear-attention's ragged_dot shape) asks for its SMEM tile with get_global,
written with its own values (`acc.shape`, `o_gmem.dtype`) and called in the body's nd_loop: the launch cannot write
that type, so the tile is allocated with pl.run_scoped in the helper, for the rest of it, as written."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256, 128), jnp.float16)


def _store_rows(acc, o_gmem, *, row0):
  def scoped(o_smem):
    o_smem[...] = acc.astype(o_smem.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem.at[pl.ds(row0, acc.shape[0])])
    plgpu.wait_smem_to_gmem(0, wait_read_only=True)
  pl.run_scoped(scoped, plgpu.SMEM(acc.shape, dtype=o_gmem.dtype))


def body(x_gmem, o_gmem):
  @plgpu.nd_loop((2,), collective_axes="sm")
  def _loop(loop_info: plgpu.NDLoopInfo):
    row0 = loop_info.index[0] * 128
    acc = x_gmem[pl.ds(row0, 128)].astype(jnp.float32)
    _store_rows(acc + 1.0, o_gmem, row0=row0)


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("sm",),
                        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup))
  return kernel, (X,), "cuda"
