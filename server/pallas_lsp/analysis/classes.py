"""What a class's source says about its instances' attributes, read from its syntax: dataclass fields and
`self.<attr> = value` assignments (the evaluator computes their values)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import reads

if TYPE_CHECKING:
    from .values import ClassValue


def _terminal_name(expr: ast.AST) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None


def class_members(cls: ast.ClassDef) -> dict[str, ast.AST]:
    """What the class body writes by name: its methods, `x = value` and `x: T = value` (the last one written
    wins, as when the class body runs). Kept on the node (until an edit of its body: `model_patch`)."""
    found = getattr(cls, "_pallas_members", None)
    if found is None:
        found = {}
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                found.update((t.id, stmt) for t in stmt.targets if isinstance(t, ast.Name))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                found[stmt.target.id] = stmt
        cls._pallas_members = found
    return found


def dataclass_fields(cls: ast.ClassDef) -> list[ast.AnnAssign] | None:
    """The fields of a `@dataclass` class, or of a `typing.NamedTuple` subclass (its constructor takes the same
    arguments), in the order they are written (not `ClassVar`s); None for another class. Kept on the node, as
    `class_members` (asked for every attribute of every instance evaluated)."""
    found = cls.__dict__.get("_pallas_fields", _NOT_KNOWN)
    if found is _NOT_KNOWN:
        found = cls._pallas_fields = _dataclass_fields(cls)
    return found


_NOT_KNOWN = object()


def _dataclass_fields(cls: ast.ClassDef) -> list[ast.AnnAssign] | None:
    if not any(_terminal_name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in cls.decorator_list) \
            and not any(_terminal_name(base) == "NamedTuple" for base in cls.bases):
        return None
    return [s for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            and not (_terminal_name(s.annotation.value if isinstance(s.annotation, ast.Subscript)
                                    else s.annotation) == "ClassVar")]


def field_default(field: ast.AnnAssign) -> ast.expr | None:
    """A field's default: `= value`, `field(default=value)`, or what `field(default_factory=f)` makes (the
    body of a `lambda: value`, else a call of `f` with no arguments); None where it has none."""
    default = field.value
    if isinstance(default, ast.Call) and _terminal_name(default.func) == "field":
        keywords = {k.arg: k.value for k in default.keywords if k.arg}
        default = keywords.get("default")
        factory = keywords.get("default_factory")
        if default is None and factory is not None:
            default = _factory_product(factory)
    return default


def _factory_product(factory: ast.expr) -> ast.expr:
    """The expression a `default_factory` evaluates to; a made call node is kept on the factory, so that its
    identity (which the evaluator's answers are kept by) lasts as long as the tree."""
    if isinstance(factory, ast.Lambda) and not (factory.args.args or factory.args.posonlyargs
                                                or factory.args.kwonlyargs or factory.args.vararg):
        return factory.body
    made = getattr(factory, "_pallas_factory_call", None)
    if made is None:
        made = ast.copy_location(ast.Call(func=factory, args=[], keywords=[]), factory)
        ast.fix_missing_locations(made)
        factory._pallas_factory_call = made
    return made


def self_assignments(cls: "ClassValue") -> dict[str, tuple[ast.AST, str, ast.expr]]:
    """`self.<attr> = value` in the class's methods, `__init__` first: attr -> (method, self's name, value);
    computed once per class, from each method's own, kept until an edit under that method: a keystroke
    in one method of a 3,000-line class walks that method again, not every one."""
    key = ("self-assignments", id(cls.node))
    found = cls.model.eval_cache.get(key)
    if found is not None:
        return found
    reads.note(("deep", id(cls.node)))  # every method's body, nested functions too
    found = {}
    methods = [s for s in cls.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    methods.sort(key=lambda m: m.name != "__init__")
    for method in methods:
        for attr, assigned in _method_self_assignments(cls.model, method).items():
            found.setdefault(attr, assigned)
    cls.model.eval_cache.keep(key, found)
    return found


def constructor_parameters(init: ast.AST, bound: dict) -> list[str]:
    """The parameters of `__init__` (after `self`) that `bound` lacks and have no default: what an instance
    whose construction is not known (`self` in a method) was given at the class's call sites."""
    spec = init.args
    positional = [*spec.posonlyargs, *spec.args][1:]
    required = positional[:len(positional) - len(spec.defaults)] if spec.defaults else positional
    required += [arg for arg, default in zip(spec.kwonlyargs, spec.kw_defaults) if default is None]
    return [arg.arg for arg in required if arg.arg not in bound]


ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag", "enum.ReprEnum"})


def enum_member(name: str, stmt: ast.AST) -> bool:
    """Is `name = value` in an Enum's body a member (not `_ignore_`, a dunder or a descriptor)? `auto()` makes
    one: its value is not known, but which member it is is (a table keyed by members)."""
    if name.startswith("_") or not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return False
    value = stmt.value
    return not (isinstance(value, ast.Call) and _terminal_name(value.func) in ("property", "nonmember"))


def enum_length(evaluator, cls: "ClassValue"):
    """`len(Stage)`: the members of an Enum written in its own body with distinct constant values (an alias,
    a value not known, or an inherited member: not known)."""
    from .values import UNKNOWN, Const

    values = []
    for stmt in cls.node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and enum_member(stmt.targets[0].id, stmt):
            value = evaluator.value(cls.model, stmt.value)
            if not isinstance(value, Const):
                return UNKNOWN
            values.append(value.value)
    return Const(len(values)) if values and len(set(values)) == len(values) else UNKNOWN


def is_enum(evaluator, cls: "ClassValue", seen: int = 0) -> bool:
    """Does the class derive from `enum.Enum` (or `IntEnum`, `StrEnum`, `Flag`), within 8 levels?"""
    from .values import Api, ClassValue

    for base in cls.node.bases:
        value = evaluator.value(cls.model, base)
        if isinstance(value, Api) and value.name in ENUM_BASES or \
                isinstance(value, ClassValue) and seen < 8 and is_enum(evaluator, value, seen + 1):
            return True
    return False


def _method_self_assignments(model, method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict:
    """`self_assignments` of one method, the first of each attribute; kept until an edit under it."""
    return reads.kept_walk(model, "method-self-assignments", method, lambda: _assigned_to_self(method))


def _assigned_to_self(method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict:
    found: dict = {}
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return found
    self_name = positional[0].arg
    for node in _statements(method):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == self_name):
                    found.setdefault(target.attr, (method, self_name, node.value))
        elif isinstance(node, ast.Expr) and _frozen_store(node.value, self_name):
            # `object.__setattr__(self, "x", value)`: how a frozen dataclass's `__post_init__` sets a field
            found.setdefault(node.value.args[1].value, (method, self_name, node.value.args[2]))
    return found


def _frozen_store(call: ast.expr, self_name: str) -> bool:
    """`object.__setattr__(self, "name", value)`."""
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__setattr__"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "object" and len(call.args) == 3
            and not call.keywords and isinstance(call.args[0], ast.Name) and call.args[0].id == self_name
            and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str))


def set_after_init(field: ast.AnnAssign) -> bool:
    """`x: T = dataclasses.field(init=False)` with no default: a field the class's methods set
    (`__post_init__`), not its constructor."""
    default = field.value
    if not (isinstance(default, ast.Call) and _terminal_name(default.func) == "field"):
        return False
    keywords = {k.arg: k.value for k in default.keywords if k.arg}
    init = keywords.get("init")
    return (isinstance(init, ast.Constant) and init.value is False and "default" not in keywords
            and "default_factory" not in keywords)


_STATEMENT_LISTS = ("body", "handlers", "orelse", "finalbody", "cases")  # in the order of their nodes' fields


def _statements(function: ast.AST) -> list[ast.AST]:
    """The statements under `function` (nested functions' too) in `walk_nodes`' order, and the handlers and
    cases holding some: an assignment is a statement, and no expression holds one."""
    found = [function]
    index = 0
    while index < len(found):
        for name in _STATEMENT_LISTS:
            found += getattr(found[index], name, ())
        index += 1
    return found
