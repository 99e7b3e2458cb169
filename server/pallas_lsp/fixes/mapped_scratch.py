"""Fix (PAL001): `staged = jax.tree.map(pl.get_global, TREE)` in a Mosaic GPU kernel body asks for a tree of
buffers, which `scratch_types=TREE` allocates whole: a dict's buffers reach the body as keyword arguments
(`**staged`), a list's or tuple's as its last positional ones (`*staged`), so `staged["centred"]` and
`staged[0]` read as before.

    def body(x_ref, o_ref, *, buffers):                    def body(x_ref, o_ref, *, buffers, **staged):
        staged = jax.tree.map(pl.get_global, buffers.types())  ...
        ...                                          ->
    plgpu.kernel(functools.partial(body, buffers=buffers),   plgpu.kernel(functools.partial(body, buffers=buffers),
                 out_type=..., grid=...)                          out_type=..., grid=..., scratch_types=buffers.types())

jax 0.12's `plgpu.kernel` passes a Sequence of scratch types positionally and a Mapping as keywords (its
`batched_body`); a `pl.pallas_call` takes a list or tuple as `scratch_shapes=TREE`, by position. Only for a tree
that is one dict or one list/tuple of types (what `**`/`*` hand back whole), in a body the launches call
directly, with no scratch of their own yet and no interpreter.
"""

from __future__ import annotations

import ast
from dataclasses import replace

import libcst as cst

from ..analysis.values import Mapping, Seq
from .allocate_as_scratch import _before_keyword_bound
from .kernel_edits import (
    CannotFix,
    FixBuilder,
    add_parameter,
    call_with_keyword,
    check_parameters,
    remove_get_global,
    remove_statement,
)
from .sites import locate
from .type_in_scope import type_at_launches

_LAUNCHES = ("plgpu.kernel", "pl.kernel")


def fix(project, model, finding):
    call = finding.facts.get("mapped_get_global")
    if not isinstance(call, ast.Call) or finding.facts.get("model") is not model or len(call.args) != 2:
        return None
    tree = project.evaluator.value(model, call.args[1])
    if not isinstance(tree, (Mapping, Seq)):
        raise CannotFix("the tree of types is not one dict, list or tuple")
    keyword = isinstance(tree, Mapping)
    located = locate(project, model, call)
    if located is None:
        return None
    use, where, entries = located
    unpacked = _unpacked_names(model, call, tree)
    if unpacked is not None and where.helper is None and not where.siblings and not where.moved:
        use = replace(use, statement=model.parents.get(call), name=", ".join(unpacked))
    elif where.helper is not None or where.siblings or where.moved or use.name is None or use.statement is None:
        raise CannotFix("the buffers are not bound to one name in the launched body itself")
    apis = {e.api for e in entries}
    # A pallas_call hands its scratch_shapes' leaves to the body by position, a dict's too (flattened): a list or
    # tuple only there (jax 0.12), and no grid spec, which would hold them instead.
    if not entries or not (apis <= set(_LAUNCHES) or (apis == {"pl.pallas_call"} and not keyword and not any(
            e.kernel.kwarg("grid_spec") for e in entries))):
        raise CannotFix("only plgpu.kernel and pl.kernel take a dict of scratch types, a pallas_call a sequence")
    if any(e.interpret or e.maybe_interpret for e in entries):
        raise CannotFix("an interpreted launch: its scratch is not the fix's to choose")
    if any(e.kernel.kwarg("scratch_types") or e.kernel.kwarg("scratch_shapes") for e in entries):
        raise CannotFix("the launch has scratch of its own, which the tree would have to join")
    scratch_keyword = "scratch_shapes" if apis == {"pl.pallas_call"} else "scratch_types"
    code = type_at_launches(project, model, call.args[1], entries)
    if code is None:
        raise CannotFix(f"{model.segment(call.args[1], 40)} cannot be written at the launch")
    builder = FixBuilder(project)
    for body_model, body, body_entries in where.bodies:
        if unpacked is not None:  # `a, b = jax.tree.map(...)`: each a parameter of its own, in order
            check_parameters(body)
            index = _before_keyword_bound(body, body_entries)
            for name in unpacked if index is None else reversed(unpacked):  # each goes before the one after it
                add_parameter(builder, body_model, body, name, index)
        else:
            _take_all(builder, body_model, body, use.name, keyword)
    if unpacked is not None:
        remove_statement(builder, model, use.statement)
    else:
        remove_get_global(builder, model, use, use.name)
    for entry in entries:
        file, _ = builder.file(entry.model)
        launch = file.find_ast(entry.model, entry.kernel.node, cst.Call)
        if launch is None:
            raise CannotFix("the launch was not found")
        file.rewrite(launch, lambda updated: call_with_keyword(updated, scratch_keyword, code))
    taken = use.name if unpacked is not None else ("**" if keyword else "*") + use.name
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate {use.name} as scratch ({scratch_keyword}={code}), "
                       f"taken by the body as {taken}", "safe", preferred=True)


def _unpacked_names(model, call: ast.Call, tree) -> list[str] | None:
    """The names of `a, b = jax.tree.map(pl.get_global, (A, B))`, one per type of a sequence, each bound once
    in its function; None for any other statement."""
    statement = model.parents.get(call)
    if not (isinstance(tree, Seq) and isinstance(statement, ast.Assign) and statement.value is call
            and len(statement.targets) == 1 and isinstance(statement.targets[0], (ast.Tuple, ast.List))):
        return None
    names = [n.id if isinstance(n, ast.Name) else None for n in statement.targets[0].elts]
    function = model.enclosing_function(call)
    if None in names or len(names) != len(tree.items) or function is None or any(
            len(model.scopes[function].bindings.get(name, [])) != 1 for name in names):
        return None
    return names


def _take_all(builder: FixBuilder, model, body: ast.FunctionDef, name: str, keyword: bool) -> None:
    """`body` takes the scratch refs as `**name` (a dict's) or `*name` (a sequence's, after its positional
    parameters; keyword-only ones stay after it)."""
    args = body.args
    if args.posonlyargs or args.kwarg is not None or (not keyword and (args.vararg is not None or args.defaults)):
        raise CannotFix(f"{body.name} takes **kwargs, *args, positional-only or defaulted parameters")
    file, _ = builder.file(model)
    node = file.function(body)
    if node is None:
        raise CannotFix("the kernel body was not found")

    def change(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = updated.params
        if keyword:
            return updated.with_changes(params=params.with_changes(star_kwarg=cst.Param(cst.Name(name))))
        return updated.with_changes(params=params.with_changes(star_arg=cst.Param(cst.Name(name))))

    file.rewrite(node, change)
