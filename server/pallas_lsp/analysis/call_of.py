"""The call an expression stands for (`mesh = pltpu.create_tensorcore_mesh(...)`, then `mesh=mesh`), and
the API it calls: what the kernel model reads a launch's backend from, and the kernel parameters
their memory space."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .classes import self_assignments
from .frames import Frame
from .values import Api, Func, Instance

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project


def call_of(model: "ModuleModel", node: ast.AST | None, depth: int = 0) -> tuple["ModuleModel", ast.Call] | None:
    """The call an expression stands for, through simple `name = call(...)` bindings."""
    if isinstance(node, ast.Call):
        return model, node
    if isinstance(node, ast.Name) and depth < 4:
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if binding is not None and binding.kind == "assign" and binding.value is not None:
            return call_of(model, binding.value, depth + 1)
    return None


def callee(project: "Project", model: "ModuleModel", node: ast.AST | None) -> tuple[str | None, ast.Call | None, "ModuleModel"]:
    return callee_in_frame(project, model, node)[:3]


def callee_in_frame(project: "Project", model: "ModuleModel", node: ast.AST | None):
    """`callee`'s (API name, call, module) and the frame the call's arguments are read in: None, or a method's,
    whose `self` is the instance it was called on (`mesh=cfg.mesh()`, `def mesh(self): return plgpu.Mesh(
    grid=(self.num_blocks,), ...)`: the grid is the instance's)."""
    found = call_of(model, node) or _attribute_call(project, model, node)
    if found is None:
        return None, None, model, None
    model, call = found
    evaluator = project.evaluator
    value, frame = evaluator.value(model, call.func), None
    for _ in range(3):  # `mesh=_mesh(n)`, `def _mesh(n): return plgpu.Mesh(grid=(n,), ...)`: the helper's call
        returned = _returned_call(value.node) if isinstance(value, Func) else None
        if returned is None:
            break
        if value.self_value is None:
            frame = None  # a plain helper's parameters: as its call sites give them
        elif any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            break
        else:
            args = [evaluator.value(model, a, frame) for a in call.args]
            kwargs = {k.arg: evaluator.value(model, k.value, frame) for k in call.keywords}
            frame = Frame(value.node, evaluator.bind_arguments(value, args, kwargs), 0)
        model, call = value.model, returned
        value = evaluator.value(model, call.func, frame)
    return (value.name if isinstance(value, Api) else None), call, model, frame


def _returned_call(function: ast.AST) -> ast.Call | None:
    """The call a function's one `return` gives, where it has one `return` (nested functions left out)."""
    if not isinstance(function, ast.FunctionDef):
        return None
    returns, stack = [], list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            returns.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return returns[0].value if len(returns) == 1 and isinstance(returns[0].value, ast.Call) else None


def table_callee(project: "Project", model: "ModuleModel", node: ast.AST | None) -> str | None:
    """What a value looked up in a table is made by (`compiler_params=TUNED[block_rows]`, the key known only at
    run time): the one API every value of the dict display is a call of, else None."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        return None
    binding = model.lookup(node.value.id, model.scope_of(node), node.lineno)
    table = binding.value if binding is not None and binding.kind == "assign" else None
    if not isinstance(table, ast.Dict) or not table.values or None in table.keys:
        return None
    names = {callee(project, model, value)[0] for value in table.values}
    return names.pop() if len(names) == 1 else None


def _attribute_call(project: "Project", model: "ModuleModel", node: ast.AST | None):
    """`self.mesh` of `self.mesh = plgpu.WarpMesh(...)` in a method of the instance's class: that call."""
    if not isinstance(node, ast.Attribute):
        return None
    base = project.evaluator.value(model, node.value)
    if not isinstance(base, Instance):
        return None
    assigned = self_assignments(base.cls).get(node.attr)
    return call_of(base.cls.model, assigned[2]) if assigned is not None else None
