"""Fix (PAL026): the TPU interpreter's parameters given to a Mosaic GPU kernel become the GPU interpreter's.

    def testing_interpret_params(detect_races=False):
      return pltpu.InterpretParams(detect_races=detect_races, uninitialized_memory="nan")
->
      return plgpu.InterpretGPUParams(detect_races=detect_races, uninitialized_memory="nan")

Edited where the parameters are built, followed from the launch's `interpret=` through names, helpers' returns,
conditional expressions and the keyword a call site (a `functools.partial` too) passes for the launcher's
parameter. Each name and helper on the way must be used once, so that no TPU kernel sharing it loses its
interpreter. The options the two interpreters share (`detect_races`, `uninitialized_memory`, ...) keep their
values; a TPU-only option (`dma_execution_mode`, `random_seed`, ...) has no GPU meaning: refused.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.returns import returns_in
from ..analysis.values import Api, Func
from .kernel_edits import CannotFix, FixBuilder
from .type_definition import _used_once

# The fields of jax's SharedInterpretParams (jax 0.12), in order: both interpreters take them.
SHARED_OPTIONS = ("detect_races", "on_race", "out_of_bounds_reads", "skip_floating_point_ops", "uninitialized_memory",
                  "num_cores_or_threads", "vector_clock_size", "logging_mode")
_MAX_DEPTH = 6


def fix(project, model, finding):
    sites = finding.facts.get("interpret") or []
    found: list = []
    for site in sites:
        node = site.node.value if isinstance(site.node, ast.keyword) else site.node
        if not isinstance(node, ast.expr):
            raise CannotFix("the TPU interpreter is chosen by a context manager or a global switch, not a value")
        found += constructors(project, site.model, node, "pltpu.InterpretParams")
    if not found:
        raise CannotFix("where the pltpu.InterpretParams(...) is built was not found")
    builder = FixBuilder(project)
    for where, call in dict.fromkeys(found):
        unknown = [k.arg for k in call.keywords if k.arg not in SHARED_OPTIONS]
        if unknown or len(call.args) > len(SHARED_OPTIONS):
            raise CannotFix(f"pltpu.InterpretParams is given {', '.join(str(u) for u in unknown) or 'positional options'}"
                            ", which plgpu.InterpretGPUParams does not take")
        file, imports = builder.file(where)
        target = file.find_ast(where, call.func, cst.BaseExpression)
        if target is None:
            raise CannotFix("the pltpu.InterpretParams call was not found")
        written = f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.InterpretGPUParams"
        file.rewrite(target, lambda updated, written=written: cst.parse_expression(written))
    return builder.fix(f"pallas-lsp ({finding.code}): Interpret with plgpu.InterpretGPUParams (JAX's GPU interpreter), "
                       "same options", "safe", preferred=True)


def constructors(project, model, expr: ast.expr, api: str, depth: int = 0, via=None) -> list[tuple]:
    """(model, call) for each call of `api` (`pltpu.InterpretParams`) the value of `expr` is built by; CannotFix
    where one is built in a place other code shares (a name or helper used more than once, but for a name passed
    only as the same keyword to the same function: `via`, that function's node and parameter)."""
    if depth > _MAX_DEPTH:
        return []
    evaluator = project.evaluator
    if isinstance(expr, ast.IfExp):
        return constructors(project, model, expr.body, api, depth + 1) + \
            constructors(project, model, expr.orelse, api, depth + 1)
    if isinstance(expr, ast.BoolOp):
        return [found for part in expr.values for found in constructors(project, model, part, api, depth + 1)]
    if isinstance(expr, ast.Call):
        callee = evaluator.value(model, expr.func)
        if isinstance(callee, Api) and callee.name == api:
            return [(model, expr)]
        if isinstance(callee, Func) and isinstance(callee.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not _used_once(project, callee.model, callee.node.name):
                raise CannotFix(f"{callee.node.name}() is called elsewhere too (another kernel may take its parameters)")
            return [found for ret in returns_in(callee.node.body) if ret.value is not None
                    for found in constructors(project, callee.model, ret.value, api, depth + 1)]
        return []
    if isinstance(expr, ast.Name):
        binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
        if binding is None:
            return []
        if binding.kind == "assign" and binding.value is not None:
            if not (_used_once(project, model, expr.id) or _only_passed_to(project, model, expr.id, via)):
                raise CannotFix(f"{expr.id} is used elsewhere too (another kernel may take it)")
            return constructors(project, model, binding.value, api, depth + 1)
        if binding.kind == "param":
            return _passed(project, model, binding.node, api, depth)
    return []


def _passed(project, model, param: ast.arg, api: str, depth: int) -> list[tuple]:
    """What the call sites of `param`'s function pass for it by keyword (a partial's keyword too)."""
    func = model.parents[model.parents[param]]
    found = []
    for where, call, *_ in project.evaluator.call_sites_with_nodes(model, func):
        keyword = next((k for k in getattr(call, "keywords", ()) if k.arg == param.arg), None)
        if keyword is not None:
            found += constructors(project, where, keyword.value, api, depth + 1, via=(func, param.arg))
    return found


def _only_passed_to(project, model, name: str, via) -> bool:
    """Whether every use of the module's `name` is the `param=` keyword of a call (or `functools.partial`) of the
    function `via` names, and no other module mentions it: a constant a test and a target share for one kernel."""
    if via is None or any(name in other.text for other in project.importers(model) if other is not model):
        return False
    func, param = via
    for node in ast.walk(model.tree):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        keyword = model.parents.get(node)
        call = model.parents.get(keyword)
        if not (isinstance(keyword, ast.keyword) and keyword.arg == param and isinstance(call, ast.Call)):
            return False
        target = project.evaluator.value(model, call.func)
        if isinstance(target, Api) and target.name == "functools.partial" and call.args:
            target = project.evaluator.value(model, call.args[0])
        if not (isinstance(target, Func) and target.node is func):
            return False
    return True
