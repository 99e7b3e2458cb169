"""A fix is offered only after it was applied and re-analysed: it parses, removes its finding,
adds none and imports every name it uses. Edits that fail any of these are never offered."""

from __future__ import annotations

import ast

import pytest
from pallas_lsp.analysis.findings import Fix, TextEdit
from pallas_lsp.fixes.verify import Baseline, check_fix, unimported_names

TPU_KERNEL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...]


def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                          compiler_params=pltpu.CompilerParams())(x)
"""


def replacing(ws, old: str, new: str) -> Fix:
    """A hand-made fix replacing the first `old` of kernel.py (on one line) with `new`."""
    path = str(ws.root / "kernel.py")
    text = (ws.root / "kernel.py").read_text()
    before = text[:text.index(old)]
    line, column = before.count("\n"), len(before) - (before.rfind("\n") + 1)
    from pallas_lsp.analysis.findings import Span

    return Fix("hand-made", (TextEdit(path, Span(line, column, line, column + len(old)), new),))


def verdict(ws, fix: Fix) -> str | None:
    (finding,) = ws.findings("kernel.py")
    return check_fix(ws.project, Baseline(ws.project, ws.project.model(finding.path)), finding, fix)


def test_the_old_tpu_fix_is_refused_and_the_tpu_scratch_fix_offered(ws):
    """The fix that once turned `pltpu.SemaphoreType.REGULAR` into `pl.mosaic_gpu.SemaphoreType.REGULAR`."""
    (finding,) = ws.findings("kernel.py", TPU_KERNEL)
    bad = replacing(ws, "pltpu.SemaphoreType.REGULAR", "pl.mosaic_gpu.SemaphoreType.REGULAR")
    assert verdict(ws, bad) == "it uses pl.mosaic_gpu without importing it"
    assert [fix.title for fix in ws.fixes(finding)] == [
        "pallas-lsp (PAL003): Allocate sem as scratch (scratch_shapes)",
        "pallas-lsp (PAL003): Disable PAL003 for this line"]


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("sem = pl.get_global(", "sem = = pl.get_global(", "kernel.py would not parse"),
    # parses, but Python refuses to compile a keyword given twice
    ("compiler_params=pltpu.CompilerParams())", "compiler_params=pltpu.CompilerParams(), compiler_params=None)",
     "kernel.py would not compile"),
    ("pltpu.SemaphoreType.REGULAR", "tpu.SemaphoreType.REGULAR", "it uses tpu without importing it"),
    ("    pl.semaphore_signal(sem)", "    pl.semaphore_signal(sem)  # noqa", "its finding would remain"),
    ("compiler_params=pltpu.CompilerParams())", "compiler_params=pltpu.CompilerParams(), interpret=True)",
     # interpreted by the TPU interpreter, a TPU semaphore is PAL002's finding (PAL001 is about GPU types)
     'it would add PAL002 (JAX: "TypeError: No ir_type_handler for aval type: <class \'...AbstractRef\'>"; ru)'),
])
def test_a_fix_that_breaks_code_or_does_not_fix_is_refused(ws, old, new, reason):
    ws.findings("kernel.py", TPU_KERNEL)
    assert verdict(ws, replacing(ws, old, new)) == reason


def test_unimported_names_counts_unbound_names_and_submodules_reached_through_their_package():
    tree = ast.parse("from jax.experimental import pallas as pl\n"
                     "import jax\n"
                     "x = pl.mosaic_gpu.SemaphoreType.REGULAR\n"
                     "y = plgpu.GMEM\n"
                     "z = jax.numpy.zeros\n")
    assert dict(unimported_names(tree)) == {"pl.mosaic_gpu": 1, "plgpu": 1}
    imported = ast.parse("from jax.experimental import pallas as pl\n"
                         "import jax.experimental.pallas.mosaic_gpu\n"
                         "x = pl.mosaic_gpu.SemaphoreType.REGULAR\n")
    assert dict(unimported_names(imported)) == {}


TWO_BARRIERS_VMAPPED = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def use_sem_0():
  sem0 = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_arrive(sem0)
  plgpu.barrier_wait(sem0)


def body(x_ref, o_ref):
  use_sem_0()
  sems_1 = [pl.get_global(plgpu.SemaphoreType.REGULAR) for _ in range(1)]
  sem1 = sems_1[0]
  plgpu.barrier_arrive(sem1)
  plgpu.barrier_wait(sem1)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=2, thread_name="wg", grid=(1,), grid_names=("block",)))
  return jax.vmap(fn), (jax.ShapeDtypeStruct((2, 128), jnp.float32),), "cuda"
"""


def test_a_finding_whose_advice_the_relaunch_changes_is_not_counted_as_added(ws):
    """Relaunched as a plgpu.kernel, the second barrier's finding advises scratch_types too: re-worded, not added."""
    findings = ws.findings("kernel.py", TWO_BARRIERS_VMAPPED)
    first = next(f for f in findings if f.code == "PAL006" and f.span.line == 19)
    titles = [fix.title for fix in ws.fixes(first)]
    assert ("pallas-lsp (PAL006): Use an SMEM barrier, plgpu.Barrier(num_arrivals=2) with pl.run_scoped for the "
            "rest of body, collective over 'wg', launched with plgpu.kernel, which jax.vmap batches with "
            "run_scoped on every jax") in titles


TWO_SMEM_VMAPPED = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  buf0 = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  buf0[...] = x_ref[...]
  o_ref[...] = buf0[...]


def stage(o_ref):
  buf1 = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  buf1[...] = o_ref[...] + 1.0
  o_ref[...] = buf1[...]


def both(x_ref, o_ref):
  body(x_ref, o_ref)
  stage(o_ref)


def target():
  fn = pl.kernel(both, out_type=X, mesh=plgpu.Mesh(grid=(1,), grid_names=("block",)))
  return jax.vmap(fn), (jax.ShapeDtypeStruct((2, 128), jnp.float32),), "cuda"
"""


def test_a_pal001_whose_scratch_advice_the_relaunch_changes_is_not_counted_as_added(ws):
    """Relaunched as a plgpu.kernel, the other buffer's PAL001 advises "Use scratch_types of plgpu.kernel or
    pl.run_scoped" where it said "Use pl.run_scoped (pl.kernel on Mosaic GPU lowers no scratch)": re-worded
    (g1_00380 of the generated sample, seed 1)."""
    findings = [f for f in ws.findings("kernel.py", TWO_SMEM_VMAPPED) if f.code == "PAL001"]
    assert [f.span.line + 1 for f in findings] == [10, 16]
    assert [[fix.title for fix in ws.fixes(f)] for f in findings] == [
        ["pallas-lsp (PAL001): Allocate buf0 with pl.run_scoped for the rest of body, launched with plgpu.kernel, "
         "which jax.vmap batches with run_scoped on every jax", "pallas-lsp (PAL001): Disable PAL001 for this line"],
        ["pallas-lsp (PAL001): Allocate buf1 with pl.run_scoped for the rest of stage, launched with plgpu.kernel, "
         "which jax.vmap batches with run_scoped on every jax", "pallas-lsp (PAL001): Disable PAL001 for this line"],
    ]
