"""Semaphore reservations in the order Mosaic GPU lowers a kernel body (get_global, run_scoped).

Its own module, under both the kernel model (which lists them) and the shared-memory estimate
(whose traversal is this walk with other items), so neither imports the other.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .arithmetic import MAX_ITEMS, product, range_length
from .classes import enum_length, is_enum
from .evaluate import as_memtype, terminal_name
from . import reads
from .kernels import constructor, get_global_argument, partial_api, partial_binding, unwrap_function
from .model import child_nodes
from .values import Api, ClassValue, Const, Func, KernelCall, MemType, Value

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project


@dataclass(frozen=True)
class Allocation:
    """A semaphore reservation in lowering order: `kind` "get_global" or "run_scoped"; `body` for run_scoped."""

    kind: str
    model: "ModuleModel"
    node: ast.AST
    size: int
    body: tuple["Allocation", ...] = ()
    # Reserved again by a lowering the estimator does not see: Mosaic GPU lowers the first branch of a cond
    # (lax.cond's false one, lax.switch's first) once more, in a throw-away module, to learn its result types.
    repeat: bool = False


_LEAVES = frozenset({ast.Name, ast.Constant})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_MAX_DEPTH = 8  # functions around the one walked, past which a call is not followed
_DEPTH = None  # where a walk was cut short: by the depth (else the id of the function whose recursion it met)


def _size(value: Value) -> int | None:
    memtype = as_memtype(value)
    if isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore and memtype.shape is not None:
        count = product(memtype.shape)
        return None if count is None else max(1, count)  # over 2**1024 semaphores: not counted
    return None


class Allocations:
    """Walks code in the order JAX traces it and lists get_global / run_scoped semaphore reservations.

    A Python `if` whose test is not static takes the branch with fewer reservations, a loop whose count
    is not static runs once: the list is what certainly happens, so a rule reading it never guesses high.
    """

    # What a function's walk is kept under in its module's memo (a subclass walking for other items: its own).
    memo_kind: tuple = ("semaphore-walk",)

    def __init__(self, project: "Project", exclude: set[int]):
        self.project = project
        self.exclude = exclude
        self.active: set[int] = set()
        self._exclude_key = frozenset(exclude)
        # For each function being walked: [levels of functions below it, their ids, where the walk was cut
        # short: the ids of the functions whose recursion it met, None for the depth]
        self._trail: list[list] = []

    def function(self, func: Func, stack: tuple) -> list[Allocation]:
        """The items of `func`'s body, walked with `stack` (the functions around it). Kept per function:
        a walk that is not cut short (by recursion or depth) is the same from any function around
        it that leaves room for its depth and is none of the functions it enters (`reads`: an
        edit elsewhere keeps it); one cut short by the depth only, the same from any such function
        at the same depth (kept apart, per depth: a kernel nine calls deep was walked whole at every
        keystroke)."""
        node = func.node
        if id(node) in self.exclude:
            return []
        if id(node) in self.active or len(stack) > _MAX_DEPTH:
            if self._trail:
                self._trail[-1][2].add(id(node) if id(node) in self.active else _DEPTH)
            return []
        memo, key = func.model.eval_cache, (self.memo_kind, id(node), self._exclude_key)
        found = memo.get(key)
        if found is not None:
            items, levels, inner = found
            if len(stack) + levels <= _MAX_DEPTH and self.active.isdisjoint(inner):
                self._walked(id(node), levels, inner, ())
                return list(items)
        at_depth = (*key, len(stack))
        found = memo.get(at_depth)
        if found is not None:
            items, levels, inner = found
            if self.active.isdisjoint(inner):
                self._walked(id(node), levels, inner, (_DEPTH,))
                return list(items)
        record: list = [0, set(), set()]
        self._trail.append(record)
        self.active.add(id(node))
        reads.begin(func.model.read_key, ("own", id(node)))
        try:
            body = node.body if isinstance(node.body, list) else [node.body]
            items = [a for stmt in body for a in self.visit(func.model, stmt, stack + (id(node),))]
        finally:
            self.active.discard(id(node))
            self._trail.pop()
            read = reads.end()
        levels, inner, cuts = record
        if not cuts or cuts == {_DEPTH}:
            memo.keep(at_depth if cuts else key, (tuple(items), levels, frozenset(inner)), read)
        self._walked(id(node), levels, inner, cuts)
        return items

    def _walked(self, node_id: int, levels: int, inner, cuts) -> None:
        """A function below the one walked now was walked: what that one's walk depends on."""
        if self._trail:
            around = self._trail[-1]
            around[0] = max(around[0], levels + 1)
            around[1].update(inner)
            around[1].add(node_id)
            around[2].update(cuts)

    def visit(self, model, node: ast.AST, stack) -> list[Allocation]:
        if node.__class__ in _LEAVES:  # a third of the nodes walked: nothing in them, nothing to ask
            return []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A decorated nested def runs when defined (pl.when, pl.core_map, run_scoped-style decorators).
            out = []
            for decorator in node.decorator_list:
                out += self.visit(model, decorator, stack)
            if node.decorator_list and self._runs_when_defined(model, node):
                out += self.function(Func(model, node), stack)
            return out
        if isinstance(node, (ast.Lambda, ast.ClassDef)):
            return []
        if isinstance(node, ast.If):
            test = self.project.evaluator.value(model, node.test)
            if isinstance(test, Const):
                return [a for s in (node.body if test.value else node.orelse) for a in self.visit(model, s, stack)]
            branches = [[a for s in branch for a in self.visit(model, s, stack)] for branch in (node.body, node.orelse)]
            return self.either(model, node, branches)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            once = [a for s in node.body for a in self.visit(model, s, stack)]
            return once * self._trip_count(model, node.iter) + [a for s in node.orelse for a in self.visit(model, s, stack)]
        if isinstance(node, (ast.While, ast.Try)):
            return self.not_static(model, node, stack)
        if isinstance(node, _COMPREHENSIONS):
            return self._comprehension(model, node, stack)
        if isinstance(node, ast.Call):
            out = []
            for child in [node.func, *node.args, *[k.value for k in node.keywords]]:
                out += self.visit(model, child, stack)
            return out + self._call(model, node, stack)
        return [a for child in child_nodes(node) for a in self.visit(model, child, stack)]  # tokens reserve nothing

    def _comprehension(self, model, node: ast.AST, stack) -> list[Allocation]:
        """`[pl.get_global(REGULAR) for _ in Stage]`: the item's reservations once per item, as a `for` loop's
        body (none certain where a clause has an `if`); the first clause's iterable is evaluated once."""
        out = self.visit(model, node.generators[0].iter, stack)
        if any(clause.ifs for clause in node.generators):
            return out
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        once = [a for part in parts for a in self.visit(model, part, stack)]
        for clause in node.generators:
            once = once * self._trip_count(model, clause.iter)
        return out + once

    def either(self, model, node: ast.If, branches: list[list]) -> list:
        """A Python `if` whose test is not static: the branch that certainly reserves least."""
        return min(branches, key=len)

    def not_static(self, model, node: ast.AST, stack) -> list:
        """A `while` or `try`: how often, or whether, its body runs is not static; nothing is certain."""
        return []

    def _runs_when_defined(self, model, node) -> bool:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            value = self.project.evaluator.value(model, target)
            if isinstance(value, Api) and value.name in ("pl.when", "pl.loop", "pl.core_map", "pl.run_scoped",
                                                          "plgpu.nested_scope"):
                return True
            if isinstance(value, KernelCall):
                return True
        return False

    def _trip_count(self, model, iterable: ast.AST) -> int:
        """How often a loop's body certainly runs, at most MAX_ITEMS times (its reservations are listed once
        per run: `range(10**12)` is a lower bound, never a list of 10**12)."""
        if isinstance(iterable, ast.Call) and terminal_name(iterable.func) == "range" and iterable.args:
            values = [self.project.evaluator.value(model, a) for a in iterable.args]
            if all(isinstance(v, Const) and type(v.value) is int for v in values):
                length = range_length([v.value for v in values])  # None: a zero step, or too long to count
                return 1 if length is None else min(length, MAX_ITEMS)
        if isinstance(iterable, (ast.Tuple, ast.List)):
            return len(iterable.elts)
        members = self.project.evaluator.value(model, iterable)
        if isinstance(members, ClassValue) and is_enum(self.project.evaluator, members) \
                and not any("Flag" in ast.unparse(base) for base in members.node.bases):  # `for stage in Stage`
            count = enum_length(self.project.evaluator, members)
            if isinstance(count, Const) and type(count.value) is int:
                return min(count.value, MAX_ITEMS)
        return 1

    def _call(self, model, call: ast.Call, stack) -> list[Allocation]:
        value = self.project.evaluator.value(model, call.func)
        if isinstance(partial_api(value), Api) and partial_api(value).name == "pl.get_global":
            argument = get_global_argument(call, partial_binding(model, value))
            size = _size(self.project.evaluator.value(model, argument)) if argument is not None else None
            return [Allocation("get_global", model, call, size)] if size else []
        if isinstance(value, Api):
            name = value.name
            if name == "pl.run_scoped" and call.args:
                sizes = [_size(self.project.evaluator.value(model, a)) for a in call.args[1:] if not isinstance(a, ast.Starred)]
                sizes += [_size(self.project.evaluator.value(model, k.value)) for k in call.keywords
                          if k.arg not in (None, "collective_axes")]
                body = unwrap_function(self.project.evaluator.value(model, call.args[0]))
                inner = tuple(self.function(body, stack)) if body is not None else ()
                total = sum(s for s in sizes if s)
                return [Allocation("run_scoped", model, call, total, inner)] if total else list(inner)
            if name in ("lax.fori_loop", "jax.lax.fori_loop") and len(call.args) >= 3:
                return self._callable(model, call.args[2], stack)
            # Loop bodies are lowered once, whatever the trip count.
            if name == "lax.while_loop" and len(call.args) >= 2:
                return self._callable(model, call.args[1], stack)
            if name == "lax.scan" and call.args:
                return self._callable(model, call.args[0], stack)
            if name in ("lax.cond", "jax.lax.cond") and len(call.args) >= 3:
                # The cond primitive's branches are (false, true); Mosaic GPU lowers branches[0] twice
                # (lowering.py, _cond_lowering_rule: first in a throw-away module) and never releases what
                # a get_global reserved there.
                false = self._callable(model, call.args[2], stack)
                return [*repeated(false), *false, *self._callable(model, call.args[1], stack)]
            if name in ("lax.switch", "jax.lax.switch") and len(call.args) >= 2:
                branches = [self._callable(model, b, stack) for b in _elements(call.args[1])]
                return [*repeated(branches[0]), *(a for branch in branches for a in branch)] if branches else []
            if name == "pl.when" or name.startswith("pl.") or name.startswith("plgpu."):
                return []
            return []
        if isinstance(value, KernelCall) and value.body is None:
            return []
        func = unwrap_function(value) or (constructor(value) if isinstance(value, ClassValue) else None)
        if func is not None:  # a function, or a class whose `__init__` runs
            return self.function(func, stack)
        # `pl.when(cond)(f)`: the outer call's func is itself a call to pl.when.
        if isinstance(call.func, ast.Call):
            inner = self.project.evaluator.value(model, call.func.func)
            if isinstance(inner, Api) and inner.name in ("pl.when", "pl.core_map") and call.args:
                return self._callable(model, call.args[0], stack)
        return []

    def _callable(self, model, node: ast.AST, stack) -> list[Allocation]:
        func = unwrap_function(self.project.evaluator.value(model, node))
        return self.function(func, stack) if func is not None else []


def repeated(allocations: list) -> list:
    """The reservations of a branch Mosaic GPU lowers once more (other walks' items, PAL012's, are not doubled)."""
    return [dataclasses.replace(a, repeat=True, body=tuple(repeated(list(a.body)))) for a in allocations
            if isinstance(a, Allocation)]


def _elements(node: ast.AST) -> list[ast.AST]:
    """The branches of `lax.switch(index, [f, g])`, written as a list or tuple."""
    return list(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else []
