"""Fix (PAL001): a GMEM workspace a `plgpu.kernel` writes before it reads becomes one more output, dropped by
the callers.

    def body(x_ref, out_ref):                          def body(x_ref, out_ref, partials):
        partials = pl.get_global(plan.workspace)  ->       partials[...] = acc
        partials[...] = acc                                ...
        ...                                        plgpu.kernel(body, out_type=(plan.result,
    plgpu.kernel(body, out_type=plan.result)           jax.ShapeDtypeStruct(plan.workspace.shape, plan.workspace.dtype)))
    ... = make_reduce(plan)(x)                     ... = make_reduce(plan)(x)[0]

A kernel's own global memory is its outputs: XLA allocates them for it, and an output the caller drops is
scratch in all but name. An input (`pass_as_input`) is XLA's buffer, which the kernel must not write; so this
fix is offered first where the body's first use of the buffer writes it (an output starts uninitialised: where
the body reads it first, the input's zeros are what it reads). The output goes after the existing ones (the
body's last parameter, before any scratch), and every launch of the kernel found takes its old results back
(`[0]` where there was one output, `[:n]` where there were n).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.launches import kernel_launches
from ..analysis.memory_spaces import GPU_GLOBAL
from ..analysis.values import Array, MemType, Seq, ShapeDtype
from .kernel_edits import (CannotFix, FixBuilder, add_parameter, append_to_unpacking, check_parameters,
                           edit_sequence_keyword, remove_get_global, tail_unpacking, take_name)
from .semaphore_out_of_out_type import _scratch_count
from .sites import locate
from .type_in_scope import type_at_launches


def fix(project, model, call, value, code: str):
    if code != "PAL001" or not isinstance(value, MemType) or value.constructor not in GPU_GLOBAL:
        return None  # global memory in a plgpu.kernel: `plgpu.GMEM`, and `pl.ANY` / `pltpu.HBM`, which mean it there
    located = locate(project, model, call)
    if located is None:
        return None
    use, where, entries = located
    if not entries or not all(e.api == "plgpu.kernel" or _tpu_pallas_call(project, e) for e in entries) \
            or where.helper is not None \
            or len(where.bodies) != 1 or use.statement is None or where.siblings:
        return None
    _, body, _ = where.bodies[0]
    unpacked = tail_unpacking(body)  # `def body(*refs)`: `ins, (out,) = refs[:n], refs[n:]` takes one more name
    if unpacked is None:
        check_parameters(body)
    scratch = {_scratch_count(e) for e in entries}
    if len(scratch) != 1 or None in scratch or (unpacked is not None and scratch != {0}) or not _written_first(
            project, model, body, use.name, (use.statement.end_lineno, use.statement.end_col_offset)):
        return None  # the scratch parameters that follow the outputs not counted; read first, it wants the input's
        # zeros (pass_as_input)
    scratch_count = scratch.pop()
    argument = call.args[0] if len(call.args) == 1 and not call.keywords else None
    carried = type_at_launches(project, model, argument, entries) if argument is not None else None
    if carried is None:
        raise CannotFix("the workspace's type cannot be written at the launch")
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    launches = add_output(project, builder, entries, f"{imports.name('jax')}.ShapeDtypeStruct({_shape_dtype(carried)})")
    for entry in entries:
        if entry.api == "pl.pallas_call":  # the workspace stays in HBM, where the body's DMAs reach it
            _, launch_imports = builder.file(entry.model)
            spec = f"{launch_imports.name('jax.experimental.pallas')}.BlockSpec(memory_space=" \
                   f"{launch_imports.name('jax.experimental.pallas')}.ANY)"
            _add_to_outputs(builder, entry, "out_specs", spec)
    name = take_name(builder, where, "workspace")
    if unpacked is not None:
        append_to_unpacking(builder, model, unpacked, name)
    else:
        positional = [*body.args.posonlyargs, *body.args.args]
        add_parameter(builder, model, body, name, len(positional) - scratch_count if scratch_count else None)
    remove_get_global(builder, model, use, name)
    take_old_results(builder, launches)
    return builder.fix(f"pallas-lsp ({code}): Make {name} one more output of the kernel, which the callers drop",
                       "safe", preferred=True)


def _tpu_pallas_call(project, entry) -> bool:
    """A `pl.pallas_call` compiled for a TPU whose outputs are written at the launch (not in a grid spec)."""
    from ..analysis.kernel_model import TPU_TC, compiled_backend

    return (entry.api == "pl.pallas_call" and compiled_backend(project, entry) == TPU_TC
            and entry.kernel.kwarg("grid_spec") is None)


def add_output(project, builder: FixBuilder, entries, output: str) -> list:
    """`output` (a ShapeDtypeStruct's code) added after each launch's outputs in `out_type` (`out_shape` of a
    `pl.pallas_call`); the (launch, `[0]` or `[:n]`) of every call of the kernels found, whose results the caller
    then writes back to what they were."""
    launches = []
    for entry in entries:
        keyword = "out_shape" if entry.api == "pl.pallas_call" else "out_type"
        kept = _add_to_outputs(builder, entry, keyword, output)
        calls = [launch for m in [entry.model, *project.importers(entry.model)]
                 for launch in kernel_launches(project, m) if launch.kernel.node is entry.kernel.node]
        if not calls:
            raise CannotFix("no launch of the kernel was found, whose results would change")
        launches.extend((launch, kept) for launch in calls)
    return launches


def _add_to_outputs(builder: FixBuilder, entry, keyword: str, output: str) -> str:
    """`output` after the launch's one output (made a pair) or its sequence of outputs in `keyword`; what the
    callers take to keep the old results (`[0]`, `[:n]`)."""
    found = entry.kernel.kwarg(keyword)
    if found is None or found[1] is None:
        raise CannotFix(f"{keyword} is not written at the launch")
    outputs, node = found
    if isinstance(outputs, Seq):
        edit_sequence_keyword(builder, entry, keyword, output, first=False)
        return f"[:{len(outputs.items)}]"
    if not isinstance(outputs, (ShapeDtype, Array)) and not (keyword == "out_specs" and isinstance(node, ast.Call)):
        raise CannotFix("how many outputs the kernel has is not known")
    file, _ = builder.file(entry.model)
    target = file.find_ast(entry.model, node, cst.BaseExpression)
    if target is None:
        raise CannotFix(f"{keyword} was not found")
    pair = cst.parse_expression(f"(outputs, {output})")
    file.rewrite(target, lambda updated, pair=pair: pair.with_changes(
        elements=[pair.elements[0].with_changes(value=updated), pair.elements[1]]))
    return "[0]"


def take_old_results(builder: FixBuilder, launches: list) -> None:
    """Each launch `add_output` found gives its callers what it gave before: `kernel(x)[0]`, `kernel(x)[:n]`."""
    for launch, kept in launches:
        file, _ = builder.file(launch.model)
        target = file.find_ast(launch.model, launch.call, cst.Call)
        if target is None:
            raise CannotFix("a launch of the kernel was not found")
        taken = cst.parse_expression(f"results{kept}")
        file.rewrite(target, lambda updated, taken=taken: taken.with_changes(value=updated))


def _shape_dtype(carried: str) -> str:
    """The ShapeDtypeStruct's arguments for the GMEM type written `carried` at the launch: its own
    `plgpu.GMEM(shape, dtype)` arguments, else `T.shape, T.dtype`."""
    parsed = ast.parse(carried, mode="eval").body
    if isinstance(parsed, ast.Call) and len(parsed.args) == 2 and not parsed.keywords:
        return ", ".join(ast.get_source_segment(carried, a) for a in parsed.args)
    return f"{carried}.shape, {carried}.dtype"


def _written_first(project, model, function: ast.FunctionDef, name: str | None, after: tuple[int, int],
                   depth: int = 0) -> bool:
    """The first use of `name` in `function` after `after` (the get_global's end) is a store into it
    (`name[...] = ...`), or hands it to a helper of the workspace whose first use of it is one
    (`_dequant_phase(codes, ws, rows)`, which writes `ws[rows, :]` first), three calls deep at most."""
    if name is None:
        return False
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            and (n.lineno, n.col_offset) > after]
    if not uses:
        return False
    first = min(uses, key=lambda n: (n.lineno, n.col_offset))
    parents = {id(child): parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
    subscript = parents.get(id(first))
    assign = parents.get(id(subscript))
    if isinstance(subscript, ast.Call) and first in subscript.args and depth < 3:
        return _written_first_by_helper(project, model, subscript, subscript.args.index(first), depth)
    if _copied_into(project, model, first, parents):
        return True
    return (isinstance(subscript, ast.Subscript) and subscript.value is first and isinstance(subscript.ctx, ast.Store)
            and isinstance(assign, ast.Assign) and not any(  # `ws[...] = ws[...] + x` reads it first
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(assign.value)))


# Copies whose second argument is the destination they write (a TMA store, a TPU DMA).
_COPIES_INTO_SECOND = ("plgpu.copy_smem_to_gmem", "pltpu.make_async_copy", "pltpu.async_copy", "pltpu.sync_copy")


def _copied_into(project, model, name: ast.Name, parents: dict) -> bool:
    """`name` (or `name.at[i]`) is the destination of a copy that writes all of it there: `plgpu.copy_smem_to_gmem(
    tile, name.at[i])`, which a TMA store fills from the tile, or a TPU DMA (`pltpu.make_async_copy(slab, name.at[i],
    sem)`)."""
    from ..analysis.values import Api

    node = name
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.attr == "at" and isinstance(parents.get(id(parent)), ast.Subscript):
        node = parents.get(id(parent))
        parent = parents.get(id(node))
    if not (isinstance(parent, ast.Call) and len(parent.args) >= 2 and parent.args[1] is node):
        return False
    callee = project.evaluator.value(model, parent.func)
    return isinstance(callee, Api) and callee.name in _COPIES_INTO_SECOND


def _written_first_by_helper(project, model, call: ast.Call, index: int, depth: int) -> bool:
    """`_written_first` for the parameter of a plain function (no method, no `*args`) that `call` passes the
    buffer to as its `index`-th positional argument."""
    from ..analysis.values import Func

    if any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return False
    helper = project.evaluator.value(model, call.func)
    if not (isinstance(helper, Func) and isinstance(helper.node, ast.FunctionDef) and helper.self_value is None):
        return False
    positional = [*helper.node.args.posonlyargs, *helper.node.args.args]
    if index >= len(positional):
        return False
    start = (helper.node.lineno, -1)
    return _written_first(project, helper.model, helper.node, positional[index].arg, start, depth + 1)
