"""PAL008's "Ask for ... in body, not in run": the names of the type the get_global is given must mean in the
body what they mean where it was called. A star-imported name does; a local name bound once for it alone
moves into the body with it (golden global_semaphore_into_kernel_local_type); any other local name keeps no fix."""

from __future__ import annotations

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_and_reason
from pallas_lsp.fixes.edits import apply_edits

HEADER = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
'''

KERNEL = '''
X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, sem_ref, o_ref):
  pl.semaphore_signal(sem_ref)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X)


@jax.jit
def run(x):
{run}'''


def _fix(tmp_path, run: str, imports: str = ""):
    path = tmp_path / "k.py"
    text = HEADER + imports + KERNEL.format(run=run)
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(path)) if f.code == "PAL008"]
    fixes, reason = fixes_and_reason(project, finding)
    rewrites = [f for f in fixes if f.kind == "rewrite"]
    if not rewrites:
        return None, reason
    [fix] = rewrites
    return fix.title, apply_edits(text, [e for e in fix.edits if e.path == str(path)])


def test_a_star_imported_type_moves_into_the_body(tmp_path):
    (tmp_path / "types_h.py").write_text(HEADER + "\nFLAG = plgpu.SemaphoreType.REGULAR\n")
    title, text = _fix(tmp_path, "  sem = pl.get_global(FLAG)\n  return kernel(x, sem)\n",
                       imports="from types_h import *\n")
    assert title == "pallas-lsp (PAL008): Ask for sem_ref in body, not in run"
    assert ("def body(x_ref, o_ref):\n"
            "  sem_ref = pl.get_global(FLAG)\n"
            "  pl.semaphore_signal(sem_ref)\n") in text
    assert "def run(x):\n  return kernel(x)\n" in text


def test_a_local_type_used_again_keeps_no_fix(tmp_path):
    title, reason = _fix(tmp_path, "  kind = plgpu.SemaphoreType.REGULAR\n  sem = pl.get_global(kind)\n"
                                   "  print(kind)\n  return kernel(x, sem)\n")
    assert (title, reason) == (None, "kind is not a module-level name the body sees")


def test_a_local_type_made_of_another_local_keeps_no_fix(tmp_path):
    title, reason = _fix(tmp_path, "  types = plgpu.SemaphoreType\n  kind = types.REGULAR\n"
                                   "  sem = pl.get_global(kind)\n  return kernel(x, sem)\n")
    assert (title, reason) == (None, "types is not a module-level name the body sees")
