"""Comparisons of known values (`out_dtype is None`, `x.dtype in [jnp.int8, ...]`, `n == 128`), and which
branch of an `if` a binding sits in: a launch function's defaults settled in `if`s (`if out_dtype is None:
out_dtype = x.dtype`) are known once its call site is."""

from __future__ import annotations

import ast
import operator
from typing import TYPE_CHECKING, Callable

from .arrays import dtype_name
from .values import (UNKNOWN, Api, Array, ClassValue, Const, Func, Instance, Mapping, MemType, Partial, Seq, ShapeDtype, Spec,
                     Value)

if TYPE_CHECKING:
    from .model import ModuleModel

_MISSING = object()
_PALLAS = ("pl", "pltpu", "plgpu", "pltriton")
_ORDER = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
# Values that are never None (what `is None` asks of them).
_NOT_NONE = (Array, ShapeDtype, Seq, Func, Partial, Mapping, MemType, Spec)


def _plain(value: Value):
    """A Python value standing for `value` where its equality is Python's (numbers, strings, None, a dtype
    by its name, tuples of those); _MISSING otherwise."""
    if isinstance(value, Const) and (value.value is None or type(value.value) in (int, float, str, bool)):
        return ("const", value.value)
    if isinstance(value, Api):
        dtype = dtype_name(value)
        return ("dtype", dtype) if dtype is not None else _MISSING
    if isinstance(value, Seq):
        items = tuple(_plain(item) for item in value.items)
        return _MISSING if any(item is _MISSING for item in items) else ("seq", items)
    return _MISSING


def _is_none(value: Value) -> bool | None:
    if isinstance(value, Const):
        return value.value is None
    if isinstance(value, _NOT_NONE) or isinstance(value, Api) and dtype_name(value) is not None:
        return False
    return None


def _members(left: Value, right: Value) -> tuple[str, str] | None:
    """The member names of two members of one Enum (`self is Resource.RUNNING_MAX`: a member is its own
    identity and equality), or None."""
    if isinstance(left, Instance) and isinstance(right, Instance) and left.member and right.member \
            and left.cls == right.cls:
        return left.member, right.member
    return None


def _one(op: ast.cmpop, left: Value, right: Value) -> bool | None:
    members = _members(left, right)
    if members is not None and isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
        return (members[0] == members[1]) == isinstance(op, (ast.Is, ast.Eq))
    if isinstance(op, (ast.Is, ast.IsNot)):
        if not (isinstance(right, Const) and right.value is None):
            return None
        found = _is_none(left)
        return None if found is None else found == isinstance(op, ast.Is)
    if isinstance(op, (ast.In, ast.NotIn)):
        item, items = _plain(left), [_plain(i) for i in right.items] if isinstance(right, Seq) else None
        if item is _MISSING or items is None or _MISSING in items:
            return None
        return (item in items) == isinstance(op, ast.In)
    a, b = _plain(left), _plain(right)
    if a is _MISSING or b is _MISSING:
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if a[0] != b[0]:  # a dtype against a string: numpy's own rules; not guessed
            return None
        return (a == b) == isinstance(op, ast.Eq)
    compare = _ORDER.get(type(op))
    if compare is None or a[0] != "const" or b[0] != "const" or not all(
            type(v) in (int, float) for v in (a[1], b[1])):
        return None
    return compare(a[1], b[1])


def compare(node: ast.Compare, value_of: Callable[[ast.expr], Value]) -> Value | None:
    """Const(True/False) for a comparison whose every part is known; None otherwise."""
    left = value_of(node.left)
    for op, right_node in zip(node.ops, node.comparators):
        right = value_of(right_node)
        found = _one(op, left, right)
        if found is None:
            return None
        if not found:
            return Const(False)
        left = right
    return Const(True)


def bool_op(node: ast.BoolOp, value_of: Callable[[ast.expr], Value]) -> Value:
    """`a and b` / `a or b` as Python gives it, where the truth of each operand it looks at is known (the last
    operand's truth is never looked at: `cfg or Config()` with `cfg` None is the `Config` instance)."""
    value = UNKNOWN
    for index, part in enumerate(node.values):
        value = value_of(part)
        if index == len(node.values) - 1:
            return value
        known = truth(value)
        if known is None:
            return UNKNOWN
        if known != isinstance(node.op, ast.And):
            return value
    return value


def is_instance(value: Value, classinfo: Value) -> Value:
    """`isinstance(x, C)` where it is known: an array is a `jax.Array` and never an instance of a class of
    Python code or of Pallas (`quantization_utils.QuantizedTensor`); None is neither."""
    options = classinfo.items if isinstance(classinfo, Seq) else (classinfo,)
    if not isinstance(value, Array) and value != Const(None) or not options:
        return UNKNOWN
    found = []
    for option in options:
        if isinstance(option, ClassValue) or isinstance(option, Api) and option.name.split(".")[0] in _PALLAS:
            found.append(False)  # a class of Python code, or of Pallas' (`BlockSpec`, ops' `QuantizedTensor`)
        elif isinstance(option, Api) and option.name in ("jax.Array", "jnp.ndarray"):
            found.append(isinstance(value, Array))
        else:
            return UNKNOWN
    return Const(any(found))


def _extreme(pick):
    def known(args: list[Value]) -> Value:
        """`min(a, b, ...)` / `max(...)` of known numbers (`block = min(block_rows, rows)`)."""
        items = args[0].items if len(args) == 1 and isinstance(args[0], Seq) else args
        numbers = [i.value for i in items if isinstance(i, Const) and type(i.value) in (int, float)]
        return Const(pick(numbers)) if numbers and len(numbers) == len(items) else UNKNOWN
    return known


def _len(args: list[Value]) -> Value:
    if len(args) == 1 and isinstance(args[0], Seq):
        return Const(len(args[0].items))
    if len(args) == 1 and isinstance(args[0], (Array, ShapeDtype)) and args[0].shape:
        return Const(args[0].shape[0])
    return UNKNOWN


def _callable(args: list[Value]) -> Value:
    """`callable(tiling)`: a tuple, number or array is not; a function or partial is."""
    if len(args) != 1:
        return UNKNOWN
    if isinstance(args[0], (Seq, Const, Array, ShapeDtype)):
        return Const(False)
    return Const(True) if isinstance(args[0], (Func, Partial)) else UNKNOWN


# Builtins evaluated where their arguments are known (a name the module binds itself is not one of them).
def as_sequence(value: Value) -> Seq | None:
    """The items of a sequence, or of a `typing.NamedTuple` instance in field order (`list(Sync(copy=..., written=...))`,
    `*Sync.scratch()`); None where not known."""
    if isinstance(value, Seq):
        return value
    if not isinstance(value, Instance) or value.member is not None:
        return None
    from .classes import dataclass_fields

    cls = value.cls.node
    if not isinstance(cls, ast.ClassDef) or not any(getattr(b, "id", getattr(b, "attr", None)) == "NamedTuple"
                                                    for b in cls.bases):
        return None
    fields = dataclass_fields(cls) or []
    names = [f.target.id for f in fields]
    given = dict(value.kwargs)
    if len(value.args) > len(names) or set(given) - set(names):
        return None
    given.update(zip(names, value.args))
    if set(given) != set(names):
        return None  # a default the instance keeps: not evaluated here
    return Seq(tuple(given[name] for name in names))


def _sequence(args: list[Value]) -> Value:
    """`list(xs)`, `tuple(xs)` of a known sequence or NamedTuple: its items."""
    found = as_sequence(args[0]) if len(args) == 1 else None
    return found if found is not None else UNKNOWN


BUILTINS = {"isinstance": lambda args: is_instance(*args) if len(args) == 2 else UNKNOWN,
            "min": _extreme(min), "max": _extreme(max), "len": _len, "callable": _callable,
            "list": _sequence, "tuple": _sequence}


def _integers(compute, count: int):
    def known(args: list[Value]) -> Value:
        if len(args) != count or not all(isinstance(a, Const) and type(a.value) is int for a in args):
            return UNKNOWN
        found = compute(*(a.value for a in args))
        return UNKNOWN if found is None else Const(found)
    return known


# Pallas' integer helpers, as jax 0.12 computes them (`pl.next_power_of_2(64)`, `pl.cdiv(1000, 128)`).
INTEGER_HELPERS = {
    "pl.next_power_of_2": _integers(lambda x: None if x < 0 else 1 if x == 0 else 2 ** (x - 1).bit_length(), 1),
    "pl.cdiv": _integers(lambda a, b: -(-a // b) if b else None, 2),
}


# Pallas modules whose module-level names are functions, classes and plain Enum members: all true.
_PALLAS_MODULES = frozenset({"pl", "plgpu", "pltpu"})


def truth(value: Value) -> bool | None:
    """Whether a known value is true where an `if` tests it (a Const's truth, a Pallas function or class, as
    in `getattr(pl, "get_global", None) or ...`); None where not known."""
    if isinstance(value, Const) and (value.value is None or type(value.value) in (int, float, str, bool)):
        return bool(value.value)
    if isinstance(value, Api) and value.name.count(".") == 1 and value.name.split(".")[0] in _PALLAS_MODULES:
        return True
    return None


def branch_verdict(model: "ModuleModel", statement: ast.AST, use: ast.AST, scope: ast.AST,
                   test_truth: Callable[[ast.expr], bool | None]) -> str:
    """"never" where `statement` sits in a branch of an `if` its known test does not take, "always" where
    every branch or loop holding it (and not the use) is an `if` whose known test takes it, else "maybe"."""
    use_ancestors = set()
    node = use
    while node is not None and node is not scope:
        use_ancestors.add(id(node))
        node = model.parents.get(node)
    verdict = "always"
    node = statement
    while node is not None and node is not scope:
        parent = model.parents.get(node)
        if id(parent) in use_ancestors:
            break  # the use is inside it too: what runs before the use runs in the same branch
        if isinstance(parent, ast.If) and (node in parent.body or node in parent.orelse):
            taken = test_truth(parent.test)
            if taken is None:
                verdict = "maybe"
            elif taken != (node in parent.body):
                return "never"
        elif isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.ExceptHandler, ast.Match,
                                 ast.match_case, ast.With, ast.AsyncWith)):
            if not isinstance(parent, (ast.With, ast.AsyncWith)):
                verdict = "maybe"
        node = parent
    return verdict


def settled(evaluator, model: "ModuleModel", frame) -> Callable[[ast.expr], bool | None]:
    """Whether an `if` test is true in a call's frame; each test evaluated once a frame (a frame is made for
    one question: its parameters do not change while it lives)."""
    memo = frame.__dict__.setdefault("settled_tests", {})

    def test_truth(test: ast.expr) -> bool | None:
        if id(test) not in memo:
            memo[id(test)] = truth(evaluator.value(model, test, frame))
        return memo[id(test)]
    return test_truth


def taken_bindings(evaluator, model: "ModuleModel", reaching: list, use: ast.AST, scope: ast.AST, frame) -> list:
    """The reaching bindings (latest first) of a use in a call's frame, less those in a branch its known test
    does not take, up to the first that surely runs (the same list where the frame is not the use's function)."""
    if len(reaching) < 2 or frame is None or frame.func is not scope:
        return reaching
    kept = []
    for binding in reaching:
        verdict = branch_verdict(model, binding.node, use, scope, settled(evaluator, model, frame))
        if verdict == "never":
            continue
        kept.append(binding)
        if verdict == "always":
            break
    return kept or reaching
