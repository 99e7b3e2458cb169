"""Where a `get_global` argument's type is written, when it is not written in the call itself.

A kernel author keeps the type in a variable, a module constant, a dict, a class attribute, a default
parameter, a helper's return, or another module. A fix that changes the type must change it there,
and only where that definition serves this one `get_global`: each name on the way must be used once
(here), so the edit changes nothing else.
"""

from __future__ import annotations

import ast
import os

MAX_DEPTH = 8


def names_semaphore_type(node) -> bool:
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "SemaphoreType")


def _mentions(model, name: str) -> int:
    """Uses of `name` in the module (loads, attributes `x.name`, and `import ... name`)."""
    count = 0
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            count += 1
        elif isinstance(node, ast.Attribute) and node.attr == name:
            count += 1
    return count


def _used_once(project, model, name: str) -> bool:
    """`name` is used once in its module, and no workspace module importing it mentions it."""
    if _mentions(model, name) != 1:
        return False
    return not any(_mentions(other, name) for other in project.importers(model) if other is not model)


def semaphore_type_written(project, model, expr, depth: int = 0):
    """(model, `X.SemaphoreType.Y` node) that `expr` takes its type from, or None."""
    if depth > MAX_DEPTH or expr is None:
        return None
    if isinstance(expr, ast.Call):
        expr = expr.func if names_semaphore_type(expr.func) else expr  # REGULAR((4,)): the type is the callee
    if names_semaphore_type(expr):
        return model, expr
    if isinstance(expr, ast.Name):
        binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
        if binding is None and _used_once(project, model, expr.id):
            other = _star_imported(project, model, expr.id)
            return _other_module_constant(project, other, expr.id, depth) if other is not None else None
        if binding is None or not _used_once(project, model, expr.id):
            return None
        if binding.kind == "assign" and isinstance(binding.node, ast.Assign) and len(binding.node.targets) == 1:
            return semaphore_type_written(project, model, binding.value, depth + 1)
        if binding.kind == "param":
            return semaphore_type_written(project, model, _default_of(model, binding.node), depth + 1)
        if binding.kind == "import" and isinstance(binding.import_from, ast.ImportFrom):
            other = _imported_model(project, model, binding.import_from)
            if other is None:
                return None
            return _other_module_constant(project, other, binding.node.name, depth)
        return None
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):  # TYPES["sem"]
        key = expr.slice
        binding = model.lookup(expr.value.id, model.scope_of(expr), expr.lineno)
        if (binding is None or binding.kind != "assign" or not isinstance(binding.value, ast.Dict)
                or not isinstance(key, ast.Constant) or not _used_once(project, model, expr.value.id)):
            return None
        for k, v in zip(binding.value.keys, binding.value.values):
            if isinstance(k, ast.Constant) and k.value == key.value:
                return semaphore_type_written(project, model, v, depth + 1)
        return None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):  # Types.what
        binding = model.lookup(expr.value.id, model.scope_of(expr), expr.lineno)
        if binding is not None and binding.kind != "class":
            return _property_written(project, model, expr, depth)  # cfg.counter_type
        if binding is None or not _used_once(project, model, expr.value.id):
            return None
        if sum(isinstance(n, ast.Attribute) and n.attr == expr.attr for n in ast.walk(model.tree)) != 1:
            return None  # another `X.what` may read the same attribute
        for statement in binding.node.body:
            if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == expr.attr):
                return semaphore_type_written(project, model, statement.value, depth + 1)
        return None
    return None


def _property_written(project, model, expr: ast.Attribute, depth: int):
    """The type a property of the instance's class returns (`cfg.counter_type`, `@property def counter_type`),
    where its one return writes it and the property is read nowhere else in the workspace."""
    from ..analysis.values import Instance

    instance = project.evaluator.value(model, expr.value)
    options = getattr(instance, "options", (instance,))
    classes = {id(o.cls.node): o.cls for o in options if isinstance(o, Instance)}
    if len(classes) != 1 or len(options) != len([o for o in options if isinstance(o, Instance)]):
        return None
    cls = next(iter(classes.values()))
    if not project.is_workspace_file(cls.model.path):
        return None
    found = [s for s in cls.node.body if isinstance(s, ast.FunctionDef) and s.name == expr.attr
             and any(ast.unparse(d).endswith("property") for d in s.decorator_list)]
    readers = dict.fromkeys([model, cls.model, *project.importers(cls.model)])
    if len(found) != 1 or sum(_mentions(m, expr.attr) for m in readers) != 1:
        return None
    returns = [n for n in ast.walk(found[0]) if isinstance(n, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None
    return semaphore_type_written(project, cls.model, returns[0].value, depth + 1)


def _other_module_constant(project, other, name: str, depth: int):
    """The type of constant `name` of module `other`, where it is assigned once, unused there, and named
    once in all the modules that import it (this get_global's)."""
    found = other.scopes[other.tree].bindings.get(name, [])
    if (len(found) == 1 and found[0].kind == "assign" and _mentions(other, name) == 0
            and sum(_mentions(m, name) for m in project.importers(other)) == 1):
        return semaphore_type_written(project, other, found[0].value, depth + 1)
    return None


def _star_imported(project, model, name: str):
    """The one workspace module whose `from M import *` gives this module `name` (None: none, or several)."""
    found = []
    for statement in model.tree.body:
        if isinstance(statement, ast.ImportFrom) and [a.name for a in statement.names] == ["*"]:
            other = _imported_model(project, model, statement)
            if other is None:
                return None  # a module we cannot read may define it too
            if name in other.scopes[other.tree].bindings:
                found.append(other)
    return found[0] if len(found) == 1 else None


def _default_of(model, arg: ast.arg):
    arguments = model.parents.get(arg)
    if not isinstance(arguments, ast.arguments):
        return None
    positional = [*arguments.posonlyargs, *arguments.args]
    if arg in positional:
        offset = len(positional) - len(arguments.defaults)
        index = positional.index(arg)
        return arguments.defaults[index - offset] if index >= offset else None
    if arg in arguments.kwonlyargs:
        return arguments.kw_defaults[arguments.kwonlyargs.index(arg)]
    return None


def _imported_model(project, model, statement: ast.ImportFrom):
    """The workspace module a `from M import name` beside this file reads (a plain module name)."""
    if statement.level or not statement.module or "." in statement.module:
        return None
    path = os.path.join(os.path.dirname(model.path), statement.module + ".py")
    if not os.path.isfile(path) or not project.is_workspace_file(path):
        return None
    return project.model(path)
