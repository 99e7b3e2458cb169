"""Callees that cannot build, launch or be a kernel, nor be a Pallas API, told from the call's spelling.

The searches that look at every call of a module (a kernel's entry points, the interpret-mode switches,
the aliases of a Pallas API: `kernels.py`) asked the evaluator for each callee. Most are nothing of the
kind, and some cost much to evaluate: `defaultdict(...)` resolves its import (jedi, the import index),
`out.reshape(...)` the value of `out`, a parameter, from every call site of its function. Whatever
nobody else needed was evaluated for these searches only (a quarter of `check`'s CPU on tokamax and
tpu-inference); these callees are now left out before evaluating them:

- a name, or an attribute of one, every binding of which is an import from the standard library
  (`from collections import defaultdict`, `import os`, `functools.partial` itself: a call of what it
  makes is evaluated): the evaluator makes these `Api` values outside JAX, never a kernel factory or a
  Pallas API, nor a user function (unless a workspace module shadows the standard one: then it is
  evaluated as before);
- an array's own methods (`x.reshape(...)`, `x.astype(...)`, `x_ref.bitcast(...)`, `x.at[...].set(...)`):
  the names `kernels._callees` already never follows as functions in a kernel's body.
"""

from __future__ import annotations

import ast
import sys
from typing import TYPE_CHECKING

from . import reads
from .iteration import comprehension_of

if TYPE_CHECKING:
    from .model import Binding, ModuleModel
# `Project` (project.py) in annotations is a name only: project.py imports this module (to forget kept answers
# after an edit), never the other way round (tests/test_architecture.py: no circle of modules but the one known).

_STANDARD_LIBRARY = frozenset(sys.stdlib_module_names) - {"__future__"}
# An array's (a ref's) attributes: never a function of the user's, as `kernels._callees` takes them.
ARRAY_ATTRIBUTES = frozenset({"at", "shape", "dtype", "ndim", "size", "T", "astype", "reshape", "bitcast"})


def plain_callee(project: "Project", model: "ModuleModel", call: ast.Call) -> bool:
    """True when the callee of `call` is certainly no kernel factory, kernel, launch wrapper,
    `functools.partial` of one, nor a Pallas API (see the module's docstring); False when it may be.

    Where no text changes while the process lives (`check`: `reads` records nothing), a name's answer
    is kept per call: the searches over every call (the entry points, the interpret switches, a Pallas
    API's aliases, each importer's own-module search) asked the same look-ups each. Not in the server:
    kept there with what it read (`reads.kept`), the answers cost keystrokes more than the look-ups."""
    func = call.func
    if func.__class__ is ast.Attribute and func.attr in ARRAY_ATTRIBUTES:
        return True
    root = func
    while root.__class__ is ast.Attribute:
        root = root.value
    if root.__class__ is not ast.Name:
        return False
    if reads.tracking():
        return _kept_with_reads(project, model, call, root)
    known = model.__dict__.setdefault("_plain_callees", {})  # dropped with the model (or by `model_patch`)
    found = known.get(id(call))
    if found is None:
        found = known[id(call)] = _standard_library_name(project, model, root)
    return found


def _kept_with_reads(project: "Project", model: "ModuleModel", call: ast.Call, root: ast.Name) -> bool:
    """In the server: the answer kept per call with the keys its look-ups read (bindings of the name, the
    import's scope), noted again at every use, and dropped when an edit of the model forgets one of them
    (`forget_reading`): the searches over every call of a module asked each call's look-ups at every
    keystroke (a quarter of one on ejkernel's file), and a `reads.kept` answer per call cost more."""
    known = model.__dict__.get("_plain_callees_read")
    if known is None:
        known = model.__dict__["_plain_callees_read"] = {}
    found = known.get(id(call))
    if found is not None and found[0] is call:
        reads.current().update(found[2])
        return found[1]
    with reads.collected() as noted:
        answer = _standard_library_name(project, model, root)
    if len(known) > 2 * len(model.calls) + 64:  # the calls of statements edited since, never asked again
        known.clear()
    known[id(call)] = (call, answer, frozenset(noted))
    return answer


def forget_reading(model: "ModuleModel", keys) -> None:
    """Drop the answers `_kept_with_reads` kept that read one of `keys` (an edit of `model` forgets them)."""
    known = model.__dict__.get("_plain_callees_read")
    if known:
        gone = set(keys)
        for key in [key for key, (_, _, noted) in known.items() if not gone.isdisjoint(noted)]:
            del known[key]


def _standard_library_name(project: "Project", model: "ModuleModel", name: ast.Name) -> bool:
    """Every binding of `name` that a use there may see is an import from the standard library."""
    scope = model.scope_of(name)
    binding = model.lookup(name.id, scope, name.lineno)  # notes what the answer reads, as the evaluator would
    if binding is None or binding.kind != "import" or comprehension_of(model.parents, name) is not None:
        return False
    bindings = _scope_bindings(model, name.id, scope)
    return all(_standard_library_import(project, model, b) for b in bindings)


def _scope_bindings(model: "ModuleModel", name: str, scope: ast.AST) -> list["Binding"]:
    """All bindings of `name` in the scope `ModuleModel.lookup` finds it bound in (the evaluator's
    reaching bindings are some of them)."""
    while scope is not None:
        own = model.scopes.get(scope)
        found = own.bindings.get(name) if own is not None else None
        if found:
            return found
        scope = model.outer_scope(scope)
    return []


def _standard_library_import(project: "Project", model: "ModuleModel", binding: "Binding") -> bool:
    if binding.kind != "import":
        return False
    statement = binding.import_from
    if isinstance(statement, ast.ImportFrom):
        if statement.level or not statement.module:
            return False
        top = statement.module.split(".", 1)[0]
    else:
        top = binding.node.name.split(".", 1)[0]
    if top not in _STANDARD_LIBRARY:
        return False
    reads.note(("own", id(model.scope_of(statement))))
    return not _shadowed(project, model, top)


def _shadowed(project: "Project", model: "ModuleModel", top: str) -> bool:
    """A workspace module of the standard one's name, where this module's imports are resolved from."""
    known = model.__dict__.setdefault("_shadowed_standard_modules", {})
    found = known.get(top)
    if found is None:
        found = known[top] = project.find_module(top, project.import_roots(model.path)) is not None
    return found
