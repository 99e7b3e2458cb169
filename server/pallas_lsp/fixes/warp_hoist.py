"""Fix (PAL003): a `get_global` inside warp-level code (`@pl.core_map(plgpu.WarpMesh(...))`, `@plgpu.warp_map`,
`pl.core_map(self.mesh)(per_warp)`) is asked for by the enclosing kernel code, just before the warp-level
function, which closes over it.

    def body(x_ref, o_ref):                             def body(x_ref, o_ref):
        @pl.core_map(plgpu.WarpMesh(axis_name="w"))         flag = pl.get_global(REGULAR)
        def _per_warp():                          ->
            flag = pl.get_global(REGULAR)                   @pl.core_map(plgpu.WarpMesh(axis_name="w"))
            pl.semaphore_signal(flag)                       def _per_warp():
                                                                pl.semaphore_signal(flag)

Mosaic GPU lowers no `get_global` at warp level (jax 0.12: 'Unimplemented primitive in Pallas Mosaic GPU
lowering: get_global for lowering semantics ... Warp'), and warp code may use a semaphore the warpgroup code
made (lowers, jax 0.12). The warp function runs once per launch where it is defined, so the semaphore is the
same one. Only for `name = pl.get_global(T)` written directly in the warp function's body, the name bound
once there and not named in the enclosing function, and T's names meaning the same one level up.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import MOSAIC_GPU_WARP, kernel_models
from .kernel_edits import CannotFix, FixBuilder, statement_with_comment


def _warp_level(project, model, function: ast.AST) -> bool:
    """`function` runs at warp level: a `pl.core_map` with a `plgpu.WarpMesh` (decorating it, or called on it:
    `pl.core_map(self.mesh)(per_warp)`) or `plgpu.warp_map` runs it, as the kernel model says."""
    return any(kernel.backend == MOSAIC_GPU_WARP and kernel.entry.body is not None
               and kernel.entry.body.node is function for kernel in kernel_models(project, model))


def fix(project, model, call, value, code: str):
    if code != "PAL003":
        return None
    warp = model.enclosing_function(call)
    if not isinstance(warp, ast.FunctionDef) or not _warp_level(project, model, warp):
        return None
    outer = model.enclosing_function(warp)
    statement = model.parents.get(call)
    if outer is None or not (isinstance(statement, ast.Assign) and statement.value is call
                             and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                             and statement in warp.body):
        raise CannotFix("the get_global is not assigned to a name in the warp-level function's own body")
    name = statement.targets[0].id
    stores = [n for n in ast.walk(warp) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    if len(stores) != 1 or any(isinstance(a, ast.arg) and a.arg == name for a in ast.walk(warp)):
        raise CannotFix(f"{name} is bound more than once in {warp.name}")
    named = [n for n in ast.walk(outer) if isinstance(n, ast.Name) and n.id == name]
    if any(not _inside(model, n, warp) for n in named) or any(
            isinstance(a, ast.arg) and a.arg == name for a in outer.args.args + outer.args.kwonlyargs):
        raise CannotFix(f"{outer.name} names {name} too")
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and model.lookup(node.id, model.scope_of(call), call.lineno) is not \
                model.lookup(node.id, outer, warp.lineno):
            raise CannotFix(f"{node.id} means something else outside {warp.name}")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    definition = file.function(warp)
    index = warp.body.index(statement)
    if definition is None or not isinstance(definition.body, cst.IndentedBlock):
        raise CannotFix("the warp-level function was not found")
    line = definition.body.body[index]
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        raise CannotFix("the get_global shares its line")
    allocate = cst.parse_statement(statement_with_comment(builder, model, statement) + "\n")

    def hoist(updated: cst.FunctionDef):
        lines = list(updated.body.body)
        del lines[index]
        if index == 0 and lines:  # the function's new first line follows its `def` line directly
            lines[0] = lines[0].with_changes(leading_lines=[l for l in lines[0].leading_lines if l.comment])
        if not lines:
            lines = [cst.SimpleStatementLine([cst.Pass()])]
        blank = [line for line in updated.leading_lines if line.comment is None]
        comments = [line for line in updated.leading_lines if line.comment is not None]
        moved = updated.with_changes(body=updated.body.with_changes(body=lines),  # comments stay with the def
                                     leading_lines=[cst.EmptyLine(indent=False), *comments])
        return cst.FlattenSentinel([allocate.with_changes(leading_lines=blank), moved])

    file.rewrite(definition, hoist)
    return builder.fix(f"pallas-lsp ({code}): Ask for {name} in {outer.name}, before the warp-level {warp.name}",
                       "safe", preferred=True)


def _inside(model, node: ast.AST, function: ast.AST) -> bool:
    while node is not None:
        if node is function:
            return True
        node = model.parents.get(node)
    return False
