"""Scratch of a `pallas_call` whose specs live in a grid spec (`grid_spec=pltpu.PrefetchScalarGridSpec(...)`,
`pl.GridSpec(...)`): JAX takes the scratch there and nowhere else (jax 0.12, next to a grid spec:
"If `grid_spec` is specified, then `scratch_shapes` must be `()`"), so a fix that allocates scratch adds it
to the grid spec's own `scratch_shapes`, where the grid spec is built: at the launch, or in one assignment
of a variable that only this launch reads (else the new scratch would reach other launches: refused).
"""

from __future__ import annotations

import ast

from ..analysis.values import Api
from .cst_locate import CannotFix

# Grid spec constructors and the position of `scratch_shapes` among their positional parameters.
GRID_SPECS = {"pl.GridSpec": 3, "pltpu.PrefetchScalarGridSpec": 4}


def grid_spec_call(project, entry) -> ast.Call | None:
    """The call that builds the launch's grid spec (in `entry.model`); None when the launch has none.
    CannotFix where the grid spec is built where a fix cannot safely add to it."""
    found = entry.kernel.kwarg("grid_spec")
    if found is None:
        return None
    node, model = found[1], entry.model
    if node is None:
        raise CannotFix("the grid spec is not written at the launch, and JAX takes its scratch only there")
    call = _built_once(project, model, node) if isinstance(node, ast.Name) else node
    if not (isinstance(call, ast.Call) and constructor(project, model, call) in GRID_SPECS):
        raise CannotFix(f"the launch's grid spec comes from {model.segment(call, 40)}, not from a pl.GridSpec or "
                        "pltpu.PrefetchScalarGridSpec call at the launch or in a variable only it reads, and JAX "
                        "takes its scratch only in that call")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise CannotFix("the grid spec's arguments are unpacked (`*args`, `**kwargs`), so where its scratch "
                        "goes is not known")
    return call


def scratch_argument(project, model, call: ast.Call) -> ast.AST | None:
    """The grid spec call's `scratch_shapes` as written (positional or keyword); None where it passes none."""
    position = GRID_SPECS[constructor(project, model, call)]
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == "scratch_shapes"), None)


def constructor(project, model, call: ast.Call) -> str | None:
    """The API a call calls (`pltpu.PrefetchScalarGridSpec`), not the value it returns: a helper that returns a
    grid spec is no place to add to."""
    func = project.evaluator.value(model, call.func)
    return func.name if isinstance(func, Api) else None


def _built_once(project, model, name: ast.Name) -> ast.AST:
    """The value a grid spec variable is assigned once, in the launch's module, and read by this launch only."""
    binding = model.lookup(name.id, model.scope_of(name), name.lineno)
    where = f"{name.id} is built"
    if binding is None or binding.kind != "assign" or binding.value is None:
        raise CannotFix(f"the grid spec {name.id} is not built in this module, and JAX takes its scratch only in it")
    scope = model.scope_of(binding.node)
    if len(model.scopes[scope].bindings.get(name.id, [])) != 1:
        raise CannotFix(f"the grid spec {where} more than once, so which one the launch gets is not known")
    reads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name.id
             and isinstance(n.ctx, ast.Load) and model.lookup(n.id, model.scope_of(n), n.lineno) is binding]
    shared = reads != [name] or (isinstance(scope, ast.Module)
                                 and any(name.id in other.text for other in project.importers(model)))
    if shared:
        raise CannotFix(f"the grid spec {name.id} is used by other code too, which the new scratch would reach")
    return binding.value
