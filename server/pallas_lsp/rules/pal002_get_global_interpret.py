"""PAL002 get-global-interpret: `get_global` reached from a kernel that runs in interpret mode.

JAX has a clear message for this (`get_global discharge is not supported in interpret mode.`) but
never reaches it: users get `TypeError: No ir_type_handler for aval type ...` from deep inside the
HLO lowering, with no line of theirs. The diagnostic sits on the get_global call and points at
what makes the kernel interpreted.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import replace

from ..analysis.evaluate import as_memtype
from ..analysis.kernels import KernelIndex, get_global_argument, get_global_calls, reachable_functions
from ..analysis.values import OneOf
from ..fixes import get_global_fixes

CODE = "PAL002"
NAME = "get-global-interpret"
SEVERITY = "error"
SUMMARY = "pl.get_global cannot run in interpret mode."

MESSAGE = ("get_global cannot run in interpret mode: JAX fails here with TypeError: No ir_type_handler for aval "
           "type: <class 'jax._src.state.types.AbstractRef'> (its clear message for this is never reached). "
           "Pass the buffer as a kernel input or scratch instead, or run this kernel without interpret mode")


def _importers(project, model):
    """Workspace modules that may launch kernels reaching this one: they import it and mention interpret mode."""
    return [other for other in project.importers(model) if project.index.mentions_interpret(other.path)]


def check(ctx):
    rule = sys.modules[__name__]
    project, model = ctx.project, ctx.model
    targets = {id(call): call for call in get_global_calls(project, model)}
    if not targets:
        return
    reported: set[int] = set()
    # Build every index first: a module's `with force_*_interpret_mode()` marks kernels of other modules.
    indexes = [KernelIndex.of(project, source) for source in [model, *_importers(project, model)]]
    for index in indexes:
        for entry in index.entries:
            if not entry.interpret or entry.body is None:
                continue
            functions = {id(f.node) for f in reachable_functions(project, entry.body) if f.model is model}
            for call_id, call in targets.items():
                if call_id in reported or id(model.enclosing_function(call)) not in functions:
                    continue
                if entry.api == "pl.pallas_call" and _result_unused(model, call):
                    continue  # pallas_call drops an unused get_global as dead code before interpreting
                reported.add(call_id)
                related = [ctx.related(site.model, site.node, f"the kernel runs in interpret mode because of {site.reason}")
                           for site in entry.interpret]
                related.append(ctx.related(entry.model, entry.node, f"kernel entry point ({entry.api})"))
                finding = ctx.finding(rule, call, MESSAGE, tuple(related))
                yield replace(finding, fixes=_fixes(ctx, call, finding))


def _result_unused(model, call) -> bool:
    """True when nothing reads what get_global returns (a bare call, or a name never loaded)."""
    parent = model.parents.get(call)
    if isinstance(parent, ast.Expr):
        return True
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        scope = model.enclosing_function(call) or model.tree
        return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(scope))
    return False


def _fixes(ctx, call, finding):
    """Fixes depend on what get_global asked for; with several possibilities, only the noqa one."""
    argument = get_global_argument(call)
    value = ctx.project.evaluator.value(ctx.model, argument) if argument is not None else None
    if isinstance(value, OneOf):
        value = None
    return get_global_fixes(ctx.project, ctx.model, call, as_memtype(value) if value is not None else None, finding)
