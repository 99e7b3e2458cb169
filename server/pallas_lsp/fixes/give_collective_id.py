"""Fix (PAL023): the kernel that asks for its barrier semaphore is given a `collective_id`.

    def compiler_params_for(chip):                      def compiler_params_for(chip):
        return pltpu.CompilerParams(                ->      return pltpu.CompilerParams(
            vmem_limit_bytes=LIMITS[chip])                      vmem_limit_bytes=LIMITS[chip], collective_id=0)

`pltpu.get_barrier_semaphore()` is the semaphore XLA sets aside for the launch's `collective_id`; the id only
names it (two kernels that synchronise differently should not share one), so the smallest id no
`collective_id=` of the modules involved names keeps the kernel's meaning, compiled and under the TPU
interpreter (below 2000, none of the interpreter's own ids: PAL011). The keyword goes where the parameters are
made: the `pltpu.CompilerParams(...)` call at the launch, or in the helper, method or local name that makes
them, or `compiler_params=` is added to a launch that gives none. Refused where that call also makes the
parameters of another launch (a kernel with no barrier semaphore is refused a `collective_id`: "collective_id
has to be unspecified or None when not using a custom barrier").
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import kernel_models
from ..analysis.result_uses import _loads
from .barrier_semaphore import _new_id
from .collective_id_below_internal import _literal_ids
from .kernel_edits import CannotFix, FixBuilder, call_with_keyword


def fix(project, model, finding):
    params, kernel = finding.facts.get("params"), finding.facts.get("kernel")
    if params is None or kernel is None or finding.facts.get("model") is not model:
        return None
    entry = kernel.entry
    if not all(_asks_for_barrier(k) for k in kernel_models(project, entry.model) if k.entry.node is entry.node):
        raise CannotFix("another body of this launch asks for no barrier semaphore, and a kernel without one is "
                        "refused a collective_id")
    builder = FixBuilder(project)
    file, imports = builder.file(params.model)
    if params.call is None:
        chosen = _new_id(project, entry)
        launch = file.find_ast(entry.model, entry.node, cst.Call)
        if launch is None:
            raise CannotFix("the launch was not found")
        written = f"{imports.name('jax.experimental.pallas.tpu')}.CompilerParams(collective_id={chosen})"
        file.rewrite(launch, lambda updated: call_with_keyword(updated, "compiler_params", written))
    else:
        _refuse_shared(project, entry, params)
        at_launch = not params.helpers and params.model is entry.model
        chosen = _new_id(project, entry) if at_launch else \
            str(next(i for i in range(2000) if i not in _literal_ids(entry.model) | _literal_ids(params.model)))
        target = file.find_ast(params.model, params.call, cst.Call)
        if target is None:
            raise CannotFix("the pltpu.CompilerParams(...) call was not found")
        file.rewrite(target, lambda updated: call_with_keyword(updated, "collective_id", chosen))
    return builder.fix(f"pallas-lsp ({finding.code}): Give the kernel collective_id={chosen} for its barrier semaphore",
                       "safe", preferred=True)


def _asks_for_barrier(kernel) -> bool:
    return any(op.kind == "barrier_semaphore" for op in kernel.semaphore_ops)


def _refuse_shared(project, entry, params) -> None:
    """CannotFix where the parameters' call may make another launch's too: a helper called more than once (or
    from another module), or a name bound to the call read more than once."""
    for helper in params.helpers:
        name = getattr(helper.node, "name", None)
        if name is None or len(helper.model.calls_named(name)) != 1 or project.importers_mentioning(helper.model, name):
            raise CannotFix(f"{name or 'the helper'} makes the compiler parameters of other launches too")
    holder = params.model.parents.get(params.call)
    if isinstance(holder, ast.Assign) and holder.value is params.call:
        names = [t.id for t in holder.targets if isinstance(t, ast.Name)]
        scope = params.model.enclosing_function(params.call) or params.model.tree
        if len(names) != 1 or len(holder.targets) != 1 or len(_loads(params.model, scope, names[0])) != 1 \
                or (scope is params.model.tree and project.importers_mentioning(params.model, names[0])):
            raise CannotFix("the compiler parameters are a value read by more than one launch")
    elif not params.helpers and not _within(params.model, params.call, entry.node):
        raise CannotFix("the compiler parameters are made away from the launch")


def _within(model, node, container) -> bool:
    while node is not None:
        if node is container:
            return True
        node = model.parents.get(node)
    return False
