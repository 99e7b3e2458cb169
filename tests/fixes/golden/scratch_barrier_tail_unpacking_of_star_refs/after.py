"""PAL001, and no PAL008 (the body runs in the kernel): a launcher, called for two kernels, takes the body as its own
parameter and hands the launch's keywords on through **kwargs (jax-linear-attention's `_kernel(cfg, name, body,
**kwargs)`); one body takes its refs as `*refs` and asks get_global for the copy's barrier."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Config:
  rows: int = 64
  interpret: bool = False


def _kernel(cfg: Config, name: str, body, **kwargs):
  interpret = plgpu.InterpretGPUParams() if cfg.interpret else None
  return plgpu.kernel(body, interpret=interpret, kernel_name=name, **kwargs)


def double(cfg: Config, x):
  out = [jax.ShapeDtypeStruct((cfg.rows, 128), jnp.float32)]

  def body(x_ref, *refs):
    outs, (x_smem, bar) = refs[: len(out)], refs[len(out):]
    plgpu.copy_gmem_to_smem(x_ref, x_smem, bar)
    plgpu.barrier_wait(bar)
    x_smem[...] = x_smem[...] * 2.0
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(x_smem, outs[0])
    plgpu.wait_smem_to_gmem(0)

  scratch = (plgpu.SMEM((cfg.rows, 128), jnp.float32), plgpu.Barrier(num_arrivals=1))
  kern = _kernel(cfg, "double", body, out_type=tuple(out), scratch_types=scratch)
  return kern(x)[0]


def negate(cfg: Config, x):
  def body(x_ref, o_ref):
    o_ref[...] = -x_ref[...]

  return _kernel(cfg, "negate", body, out_type=jax.ShapeDtypeStruct((cfg.rows, 128), jnp.float32))(x)


def target():
  return lambda x: double(Config(), x), (jax.ShapeDtypeStruct((64, 128), jnp.float32),), "cuda"
