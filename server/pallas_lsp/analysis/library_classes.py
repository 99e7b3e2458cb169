"""Classes of JAX's Pallas read from their source: the test cases of `jax._src.pallas.pallas_test_util`.

JAX values are otherwise known by name only (`pl.pallas_call`). A test class deriving from
`ptu.PallasTPUTest` launches its kernels through the base class's `self.pallas_call(...)`, which hands its
arguments on to `pl.pallas_call` (`launch_wrappers`); to see that, the base class is read where JAX keeps it:
the workspace's copy when the workspace is a JAX checkout, else the analysed environment's jax.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

from .jax_version import jax_package_folder
from .values import ClassValue

if TYPE_CHECKING:
    from .model import ModuleModel

_PALLAS_SOURCE = ("jax", "_src", "pallas")  # where the `pl.*` family is defined


def pallas_class(project, model: "ModuleModel", name: str) -> ClassValue | None:
    """The class a canonical `pl.<module>.<Class>` name (as an attribute of an imported Pallas module spells it)
    stands for, read from its module's source; None for any other name or where no source defines it."""
    parts = name.split(".")
    if parts[0] != "pl" or len(parts) < 3:
        return None
    key = ("pallas-class", name)
    cache = model.eval_cache
    if key not in cache:
        cache[key] = _read(project, model, [*_PALLAS_SOURCE, *parts[1:-1]], parts[-1])
    return cache[key]


def _read(project, model: "ModuleModel", module: list[str], class_name: str) -> ClassValue | None:
    path = project.find_module(".".join(module), project.import_roots(model.path))
    if path is None:
        folder = jax_package_folder(project)
        candidate = os.path.join(folder, *module[1:]) + ".py" if folder else None
        path = candidate if candidate and os.path.isfile(candidate) else None
    if path is None:
        return None
    source = project.model(path)
    for statement in source.tree.body:
        if isinstance(statement, ast.ClassDef) and statement.name == class_name:
            return ClassValue(source, statement)
    return None
