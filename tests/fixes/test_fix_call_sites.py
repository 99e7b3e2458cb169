"""A fix looks for a body's launches and a helper's calls only in the modules that import it (the
workspace import index): a file that merely names the body is never read as a module."""

from __future__ import annotations

import shutil

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_for

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
