"""What a kernel body runs through objects: the calls the value evaluator does not name as functions.

`kernels._callees` follows every name and attribute that is a function. Real kernels also run code
through objects and tables: a callable object handed as the body or called in it (`epilogue(pre, ...)`
runs its class's `__call__`), a `with Stage(...):` (its `__enter__` and `__exit__`), a method a mixin or
subclass gives a base-class `self` (`self.widen(x)` in `ActivationKernel.body`, `widen` defined by
`F32StagingMixin`) or the subclasses' implementations of an abstract one, a function picked from a table in
a loop (`for role in ROLE_TABLE.values()`), a function given as a parameter's default, and the wrapper a
workspace decorator puts in place of the function (`@with_staging(n)`). This module finds those edges, so the
kernel model and the fixes see the function holding a `get_global` as run by the launch whose body reaches it.

Only calls (and `with` items) are followed, never a mere mention of an object: an instance stored or
passed on runs nothing. It is cheap: each function's own nodes are looked at once (`kernels._callees`
keeps the result per function), and the workspace's subclasses are looked for only where a method is
not found on the class itself or is abstract there.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import reads
from .chosen_bodies import function_options
from .classes import class_members
from .values import UNKNOWN, ClassValue, Func, Instance, OneOf, Partial, Value

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project

_ENTER_EXIT = ("__enter__", "__exit__")
_MAX_DEPTH = 6  # subclass levels followed


def callable_function(project: "Project", value: Value | None) -> Func | None:
    """The function a call of `value` runs: a function (under any `functools.partial`), or the `__call__` of an
    instance of a workspace class (bound to it). None otherwise."""
    while isinstance(value, Partial):
        value = value.func
    if isinstance(value, Func):
        return value
    if isinstance(value, Instance) and isinstance(value.cls, ClassValue) and not value.member:
        return method(project, value.cls, "__call__", value)
    return None


def method(project: "Project", cls: ClassValue, name: str, instance: Instance | None) -> Func | None:
    """`name` as the class or a base defines it, a plain function (not a property), bound to `instance`."""
    found = project.evaluator._class_attribute(cls, name, instance)
    return found if isinstance(found, Func) and isinstance(found.node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else None


def subclasses(project: "Project", cls: ClassValue) -> list[ClassValue]:
    """The workspace classes deriving from `cls`, at any depth: in its module and the modules importing it."""
    from .class_attributes import _subclassed_names

    reads.note(reads.BROAD)  # a class added anywhere may derive from it
    found: list[ClassValue] = []
    wanted = [cls]
    for _ in range(_MAX_DEPTH):
        names = {c.node.name for c in wanted}
        ids = {id(c.node) for c in wanted}
        wanted = []
        for model in [cls.model, *project.importers(cls.model)]:
            if not names & _subclassed_names(model):
                continue
            for node in model.scopes:
                if node.__class__ is not ast.ClassDef or any(f.node is node for f in found):
                    continue
                for base in node.bases:
                    value = project.evaluator.value(model, base)
                    if isinstance(value, ClassValue) and id(value.node) in ids:
                        wanted.append(ClassValue(model, node))
                        break
        if not wanted:
            break
        found += wanted
    return found


def implementations(project: "Project", instance: Instance, name: str) -> list[Func]:
    """Each function a call of `instance.name(...)` may run: the class's own (or a base's) where it is a real one,
    else (a base class whose mixin or subclasses give it, an abstract method) each subclass's, once per function."""
    own = method(project, instance.cls, name, instance)
    if own is not None and not abstract(own.node):
        return [own]
    found: list[Func] = []
    for sub in subclasses(project, instance.cls):
        func = method(project, sub, name, Instance(sub, instance.args, instance.kwargs))
        if func is not None and not abstract(func.node) and not any(f.node is func.node for f in found):
            found.append(func)
    return found or ([own] if own is not None else [])


def abstract(function: ast.AST) -> bool:
    """A method with no behaviour of its own: `@abc.abstractmethod`, or a body of `...`, `pass` or
    `raise NotImplementedError` (after a docstring)."""
    if any((d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None)) == "abstractmethod"
           for d in function.decorator_list):
        return True
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                             and isinstance(s.value.value, str))]
    if not body:
        return True
    if len(body) != 1:
        return False
    only = body[0]
    if isinstance(only, ast.Pass) or (isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant)
                                      and only.value.value is Ellipsis):
        return True
    raised = only.exc if isinstance(only, ast.Raise) else None
    raised = raised.func if isinstance(raised, ast.Call) else raised
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def call_targets(project: "Project", model: "ModuleModel", callee: ast.expr) -> list[Func]:
    """The functions a call of `callee` (the `func` of an `ast.Call`) may run, through objects and tables:
    a callable object's `__call__`, a method a subclass or mixin gives, each function a choice may be."""
    value = project.evaluator.value(model, callee)
    found = []
    for option in function_options(value) if isinstance(value, OneOf) else (value,):
        target = callable_function(project, option)
        if target is not None:
            found.append(target)
    if isinstance(callee, ast.Attribute) and (not found or len(found) == 1 and abstract(found[0].node)):
        owner = project.evaluator.value(model, callee.value)
        if isinstance(owner, Instance) and isinstance(owner.cls, ClassValue) and not owner.member and (value is UNKNOWN or found):
            found = implementations(project, owner, callee.attr) or found
    return found


def object_callees(project: "Project", func: Func, nodes) -> list[Func]:
    """The functions `func`'s own nodes (`nodes`) run through objects and tables, that a walk of its names misses:
    a call of a callable object or of a name a loop binds, a method found in a subclass or a mixin, a `with`
    item's `__enter__`/`__exit__`, and a function given as a parameter's default."""
    model = func.model
    found: list[Func] = []
    for node in nodes:
        kind = node.__class__
        if kind is ast.Call:
            callee = node.func
            if callee.__class__ is ast.Name:
                binding = model.lookup(callee.id, model.scope_of(callee), callee.lineno)
                if binding is not None and binding.kind in ("def", "import", "class"):
                    continue  # a function or class by name: `_callees` has it
            elif callee.__class__ not in (ast.Attribute, ast.Call, ast.Subscript):
                continue  # `Finish()(v)`, `STAGES[k](v)`: what the call or pick gives is called
            found += call_targets(project, model, callee)
            if _is_partial(project, model, node):  # `functools.partial(role, x_ref)` handed to `pl.when`
                found += call_targets(project, model, node.args[0])
        elif kind is ast.With or kind is ast.AsyncWith:
            for item in node.items:
                value = project.evaluator.value(model, item.context_expr)
                if isinstance(value, Instance) and isinstance(value.cls, ClassValue) and not value.member:
                    found += [f for name in _ENTER_EXIT if (f := method(project, value.cls, name, value)) is not None]
    found += decorator_wrappers(project, func)
    for default in _defaults(func.node):
        target = callable_function(project, project.evaluator.value(model, default))
        if target is not None:
            found.append(target)
    return [f for f in found if isinstance(f.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]


def _is_partial(project: "Project", model: "ModuleModel", call: ast.Call) -> bool:
    from .values import Api

    if not call.args or call.args[0].__class__ is not ast.Name:
        return False
    value = project.evaluator.value(model, call.func)
    return isinstance(value, Api) and value.name == "functools.partial"


def _defaults(function: ast.AST) -> list[ast.expr]:
    args = getattr(function, "args", None)
    if args is None:
        return []
    return [d for d in [*args.defaults, *args.kw_defaults] if d is not None and d.__class__ in (ast.Name, ast.Attribute)]


def runs(project: "Project", model: "ModuleModel", callee: ast.expr, function: ast.AST) -> bool:
    """A call of `callee` may run `function` (through an object or table: `call_targets`), and runs nothing else."""
    targets = call_targets(project, model, callee)
    return bool(targets) and all(t.node is function for t in targets)


def object_calls(project: "Project", model: "ModuleModel", function: ast.AST, owner_model: "ModuleModel") -> list[ast.Call]:
    """The calls of `model` that run `function`, a class's `__call__` (of `owner_model`), through an instance
    (`epilogue(pre, o_ref)`, `Finish()(v)`); `self.__call__(...)` spelled out is found by its name instead."""
    if getattr(function, "name", None) != "__call__" or not isinstance(owner_model.parents.get(function), ast.ClassDef):
        return []
    found = []
    for call in model.calls:
        if call.func.__class__ in (ast.Name, ast.Call, ast.Subscript) or (
                call.func.__class__ is ast.Attribute and call.func.attr != "__call__"):
            value = project.evaluator.value(model, call.func)
            if isinstance(value, Instance) and runs(project, model, call.func, function):
                found.append(call)
    return found


def called_method(value: Value | None) -> Func | None:
    """The `__call__` its own class defines, of an instance handed to a launch as the body (`plgpu.kernel(self.body,
    ...)` where `self.body = SoftcapBody(config)`), bound to it: JAX calls the object with the refs."""
    while isinstance(value, Partial):
        value = value.func
    if not isinstance(value, Instance) or not isinstance(value.cls, ClassValue) or value.member:
        return None
    found = class_members(value.cls.node).get("__call__")
    return Func(value.cls.model, found, value) if isinstance(found, ast.FunctionDef) else None


def method_calls(project: "Project", model: "ModuleModel", function: ast.AST) -> list[ast.Call]:
    """The calls of `model` spelled with `function`'s name that run it only (`self.widen(x)` where `widen` comes from
    a mixin of the subclasses of `self`'s class): `call_targets`."""
    name = getattr(function, "name", None)
    return [call for call in model.calls_named(name) if isinstance(call.func, ast.Attribute)
            and runs(project, model, call.func, function)] if name else []


def mixed_into(project: "Project", model: "ModuleModel", helper_class: ast.ClassDef, owner: ast.ClassDef) -> bool:
    """Every instance of `owner` that runs a method of `helper_class` is one of `helper_class` too: a mixin or base
    that each subclass of `owner` holding the method derives from (`class Swish(F32StagingMixin, ActivationKernel)`),
    so `self` in the method is the `self` of `owner`'s methods."""
    owner_value = ClassValue(model, owner)
    holders = [sub for sub in subclasses(project, owner_value) if _derives(project, sub, helper_class)]
    return bool(holders)


def _derives(project: "Project", cls: ClassValue, base: ast.ClassDef, depth: int = 0) -> bool:
    if cls.node is base:
        return True
    if depth > _MAX_DEPTH:
        return False
    return any(_derives(project, b, base, depth + 1) for b in project.evaluator._bases(cls))


def decorator_wrappers(project: "Project", func: Func) -> list[Func]:
    """The wrappers the workspace decorators of `func` put in its place (`@with_staging(n)` whose `decorate(body)`
    returns its nested `wrapped`): a call of `func` runs them (the evaluator sees the function undecorated)."""
    found = []
    for decorator in getattr(func.node, "decorator_list", ()):
        value = project.evaluator.value(func.model, decorator)
        decorate = value if isinstance(value, Func) else None
        last = decorate.node.body[-1] if decorate is not None and isinstance(decorate.node, ast.FunctionDef) else None
        if isinstance(last, ast.Return) and isinstance(last.value, ast.Name):
            wrapper = next((s for s in decorate.node.body if isinstance(s, ast.FunctionDef)
                            and s.name == last.value.id), None)
            if wrapper is not None:
                found.append(Func(decorate.model, wrapper))
    return found


def other_implementations(project: "Project", model: "ModuleModel", method_node: ast.AST) -> list[ast.AST]:
    """The other definitions of a method's name a call of it may run instead: in the subclasses of its class, and
    in the other subclasses of each base that defines the name too (an abstract `__call__` and its siblings'). A
    parameter added to one of them alone would not fit the others."""
    owner = model.parents.get(method_node)
    name = getattr(method_node, "name", None)
    if not isinstance(owner, ast.ClassDef) or name is None:
        return []
    cls = ClassValue(model, owner)
    roots = [cls] + [base for base in _ancestors(project, cls) if name in class_members(base.node)]
    found: list[ast.AST] = []
    for root in roots:
        for sub in [root, *subclasses(project, root)]:
            defined = class_members(sub.node).get(name)
            if defined is not None and defined is not method_node and not any(defined is f for f in found):
                found.append(defined)
    return found


def _ancestors(project: "Project", cls: ClassValue, depth: int = 0) -> list[ClassValue]:
    if depth > _MAX_DEPTH:
        return []
    found = []
    for base in project.evaluator._bases(cls):
        found += [base, *_ancestors(project, base, depth + 1)]
    return found
