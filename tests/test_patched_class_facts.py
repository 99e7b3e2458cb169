"""What is kept about a module's classes (a dataclass's fields on its class node, the names the module's
classes derive from on its model) follows a keystroke patched in place: the next question sees the edited text."""

from __future__ import annotations

import ast

from pallas_lsp.analysis.class_attributes import _subclassed_names
from pallas_lsp.analysis.classes import dataclass_fields
from pallas_lsp.analysis.model import ModuleModel
from pallas_lsp.analysis.model_patch import patch

TEXT = """\
import dataclasses


@dataclasses.dataclass
class Config:
    rows: int = 8
    cols: int = 128


def build():
    size = 1
    return size
"""


def _class(model: ModuleModel, name: str) -> ast.ClassDef:
    return next(n for n in model.scopes if isinstance(n, ast.ClassDef) and n.name == name)


def test_a_field_renamed_in_place_is_the_field_read_next(tmp_path):
    model = ModuleModel(str(tmp_path / "config.py"), TEXT)
    assert [f.target.id for f in dataclass_fields(_class(model, "Config"))] == ["rows", "cols"]
    edited = TEXT.replace("    cols: int = 128", "    lanes: int = 128")
    assert patch(model, edited) is not None  # patched in place, not parsed again whole
    assert [f.target.id for f in dataclass_fields(_class(model, "Config"))] == ["rows", "lanes"]


def test_a_subclass_typed_into_a_function_counts_its_base(tmp_path):
    model = ModuleModel(str(tmp_path / "config.py"), TEXT)
    assert _subclassed_names(model) == frozenset()
    edited = TEXT.replace("    size = 1", "    class Fast(Config): pass")
    assert patch(model, edited) is not None
    assert _subclassed_names(model) == {"Config"}
    assert _subclassed_names(model) == frozenset(
        b.id for n in ast.walk(model.tree) if isinstance(n, ast.ClassDef) for b in n.bases)
