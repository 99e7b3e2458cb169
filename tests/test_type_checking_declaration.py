"""A name bound in the branch of `if TYPE_CHECKING:` that runs, to something the evaluator cannot follow, takes
the value its declaring branch gives (`declared_instead`), as JAX's own Mosaic GPU tests write it; a module
that never says TYPE_CHECKING skips that search, and the value found is the same either way."""

import ast

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.analysis.values import UNKNOWN, Api

DECLARED = """\
import types
from typing import TYPE_CHECKING

from jax.experimental.pallas import mosaic_gpu as _plgpu

if TYPE_CHECKING:
    plgpu = _plgpu
else:
    plgpu = types.ModuleType("mosaic_gpu")
    plgpu.__dict__.update(_plgpu.__dict__)

X = plgpu.kernel
"""


def value_of(tmp_path, text: str):
    path = tmp_path / "kernels.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    model = project.model(str(path))
    statement = next(s for s in model.tree.body if isinstance(s, ast.Assign) and s.targets[0].id == "X")
    return project.evaluator.value(model, statement.value)


def test_the_declaring_branch_gives_the_value(tmp_path):
    value = value_of(tmp_path, DECLARED)
    assert isinstance(value, Api) and value.name.endswith("kernel")


def test_without_the_declaration_nothing_is_declared(tmp_path):
    undeclared = DECLARED.replace("from typing import TYPE_CHECKING\n", "").replace("TYPE_CHECKING", "False")
    assert value_of(tmp_path, undeclared) is UNKNOWN
