"""A fix looks for a body's launches and a helper's calls only in the modules that import it (the
workspace import index): a file that merely names the body is never read as a module."""

from __future__ import annotations

import shutil

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_for
from pallas_lsp.fixes.edits import apply_edits

CASE = REPO / "tests" / "fixes" / "golden" / "input_cross_module" / "before"

# Names the body and says "import" in a string, but imports nothing of the workspace.
UNRELATED = '''"""Notes: bodies.residual_kernel is launched by launch.py; import it from there."""
residual_kernel = "bodies.residual_kernel"
'''


def test_a_cross_module_fix_reads_only_the_importers(tmp_path):
    shutil.copytree(CASE, tmp_path, dirs_exist_ok=True)
    (tmp_path / "notes.py").write_text(UNRELATED)
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(tmp_path / "bodies.py")) if f.code == "PAL001"]
    fixes = [fix for fix in fixes_for(project, finding) if fix.kind == "rewrite"]
    assert fixes and {str(tmp_path / "launch.py"), str(tmp_path / "bodies.py")} <= {e.path for e in fixes[0].edits}
    read_as_modules = {path.rsplit("/", 1)[-1] for path in project._models}
    assert "notes.py" not in read_as_modules
    assert "launch.py" in read_as_modules


KERNELS = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float16)


@plgpu.kernel(out_type=X)
def add_weights(x_ref, o_ref):
  weights = pl.get_global(plgpu.GMEM((256,), jnp.float16))
  o_ref[...] = x_ref[...] + weights[...]
'''

CALLER = '''from kernels import X, add_weights


def forward(x):
  return add_weights(x)
'''


def test_a_decorated_kernel_called_from_another_module_keeps_its_name_and_callers(tmp_path):
    """Its callers elsewhere are not edited: the name they call passes the new operand on."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "caller.py").write_text(CALLER)
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(tmp_path / "kernels.py")) if f.code == "PAL001"]
    [fix] = [fix for fix in fixes_for(project, finding) if fix.kind == "rewrite"]
    assert fix.title == ("pallas-lsp (PAL001): Pass weights as a kernel operand (the kernel is renamed "
                         "add_weights_kernel; add_weights passes it the new operand first)")
    assert {e.path for e in fix.edits} == {str(tmp_path / "kernels.py")}
    fixed = apply_edits(KERNELS, fix.edits)
    assert fixed.endswith('''def add_weights_kernel(weights_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] + weights_ref[...]


def add_weights(*operands):
  return add_weights_kernel(jnp.zeros((256,), jnp.float16), *operands)
''')
