"""Which platform a bare `pl.pallas_call` is lowered for, read from the TPU-only APIs its kernel is written with,
and the messages that follow from it (bench/apart_fixes: a TPU launch was taken for Triton and rewritten to
plgpu.kernel). Each message checked against what jax 0.12 says for the case (bench/apart_fixes/README.md)."""

TPU_ONLY = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, y_ref):
  buf = pl.get_global(pltpu.VMEM((8, 128), jnp.float32))
  buf[...] = x_ref[...]
  y_ref[...] = buf[...]


fn = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))
"""

TPU_LOWERING = "Unimplemented primitive in Pallas TPU lowering for tc: get_global"
TRITON_LOWERING = "Unimplemented primitive in Pallas Triton lowering: get_global"


def test_a_bare_pallas_call_with_a_tpu_memory_type_is_a_tpu_launch(ws):
    (finding,) = ws.findings("kernel.py", TPU_ONLY)
    assert finding.code == "PAL001"
    assert TPU_LOWERING in finding.message and "scratch_shapes" in finding.message
    assert "plgpu.SemaphoreType.REGULAR" not in finding.message  # no GPU answer for a TPU kernel
    assert [fix.title for fix in ws.fixes(finding)][0] == \
        "pallas-lsp (PAL001): Allocate buf as VMEM scratch (scratch_shapes)"


def test_the_same_kernel_in_a_module_written_for_mosaic_gpu_stays_a_gpu_launch(ws):
    source = TPU_ONLY.replace("from jax.experimental.pallas import tpu as pltpu",
                              "from jax.experimental.pallas import mosaic_gpu as plgpu\n"
                              "from jax.experimental.pallas import tpu as pltpu")
    (finding,) = ws.findings("kernel.py", source)
    assert TRITON_LOWERING in finding.message


def test_a_dma_semaphore_in_a_prefetch_grid_spec_kernel_quotes_the_tpu_lowering(ws):
    (finding,) = ws.findings("kernel.py", """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(idx_ref, x_hbm, o_ref, row):
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(x_hbm.at[pl.ds(idx_ref[0], 8)], row, sem)
  copy.start()
  copy.wait()
  o_ref[...] = row[...]


spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(1,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                                    out_specs=pl.BlockSpec((8, 128), lambda i, idx: (0, 0)),
                                    scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)])
fn = pl.pallas_call(body, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))
""")
    assert finding.code == "PAL003"
    assert finding.message.startswith(f'JAX: "{TPU_LOWERING}"')
    assert "a pltpu.SemaphoreType.DMA in scratch_shapes" in finding.message  # the kind it asked for


def test_a_helper_branching_on_the_platform_gives_each_path_its_own_type(ws):
    helper = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def staging(platform):
  if platform == "tpu":
    return pltpu.VMEM((2, 128), jnp.float32)
  return plgpu.SMEM((256,), jnp.float32)


def body(x_ref, y_ref):
  buf = pl.get_global(staging("gpu"))
  buf[...] = x_ref[...]
  y_ref[...] = buf[...]


fn = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((256,), jnp.float32))
"""
    (finding,) = ws.findings("kernel.py", helper)
    assert finding.message.startswith('JAX: "get_global only supports semaphores, got Ref<smem>{float32[256]}"')


def test_a_tpu_semaphore_the_tpu_interpreter_runs_is_pal002_alone(ws):
    findings = ws.findings("kernel.py", """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...]


fn = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                    interpret=pltpu.InterpretParams())
""")
    assert [f.code for f in findings] == ["PAL002"]


def test_a_ref_a_kernel_body_closes_over_quotes_the_ir_type_error(ws):
    (finding,) = ws.findings("kernel.py", """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@jax.jit
def launch(x):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)

  def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(done)
    pl.semaphore_wait(done)

  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))(x)
""")
    assert finding.code == "PAL008"
    assert finding.message.startswith('JAX: "TypeError: No ir_type_handler for aval type"')


def test_a_pallas_call_that_copies_with_a_tpu_dma_is_a_tpu_launch_beside_a_mosaic_gpu_path(ws):
    """bench/apart_fixes2/tpu_completion_sem_shared_helper: the module has a plgpu.kernel path too; the pallas_call
    copying with pltpu.make_async_copy is the TPU one (jax 0.12 lowered for TPU: 'Unimplemented primitive in
    Pallas TPU lowering for tc: get_global'), and its semaphore goes into scratch_shapes."""
    (finding,) = [f for f in ws.findings("kernel.py", """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def gpu_body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0


def tpu_body(x_hbm, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(x_hbm, o_ref, sem)
  copy.start()
  copy.wait()


gpu = plgpu.kernel(gpu_body, out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32))
tpu = pl.pallas_call(tpu_body, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                     out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))
""") if f.code == "PAL003"]
    assert TPU_LOWERING in finding.message and "Triton" not in finding.message
    assert [fix.title for fix in ws.fixes(finding)][0] == "pallas-lsp (PAL003): Allocate sem as scratch (scratch_shapes)"


def test_a_pallas_call_of_a_module_that_switches_on_the_tpu_interpreter_is_a_tpu_launch(ws):
    """bench/apart_fixes2/tpu_force_interpret_test_sem: `pltpu.force_tpu_interpret_mode()` chosen by a helper on
    machines without a TPU; compiled on a TPU, jax 0.12 says 'Unimplemented primitive in Pallas TPU lowering for
    tc: get_global' (PAL003 said Triton and advised plgpu.kernel)."""
    (finding,) = ws.findings("kernel.py", """\
import contextlib
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...]
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


def interpreted_off_tpu():
  return contextlib.nullcontext() if jax.default_backend() == "tpu" else pltpu.force_tpu_interpret_mode()


def run(x):
  with interpreted_off_tpu():
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(x)
""")
    assert finding.code == "PAL003"
    assert TPU_LOWERING in finding.message and "plgpu.kernel" not in finding.message
