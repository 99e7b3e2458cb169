"""Fix (PAL020): the launch's `scratch_shapes=` (or `grid=`, `in_specs=`, `out_specs=`) moves into its grid spec.

    pl.pallas_call(body, grid_spec=plan.grid_spec(), scratch_shapes=plan.staging())
    ->  pl.pallas_call(body, grid_spec=plan.grid_spec())   # and in SparsePlan.grid_spec:
        pltpu.PrefetchScalarGridSpec(..., scratch_shapes=self.staging())

JAX reads these from the grid spec alone when a launch has one, in the same order and with the same meaning (a
`pallas_call` without a grid spec builds `pl.GridSpec(grid, in_specs, out_specs, scratch_shapes)` of them), so
the kernel gets the same refs. The grid spec is edited where it is built (`grid_spec.grid_spec_site`: at the
launch, a variable only it reads, a function only it calls, here or in another workspace module), the moved code
written as it reads there (`self.staging()` in the plan's method for `plan.staging()` at the launch). Refused where
the grid spec already sets the field (which of the two the author meant is not known), or where the moved code's
names mean something else where the grid spec is built.
"""

from __future__ import annotations

import ast

import libcst as cst

from .grid_spec import GRID_SPECS, code_in_spec, constructor, grid_spec_site
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder, call_with_keyword, without_keyword


def fix(project, model, finding):
    entry, fields = finding.facts.get("entry"), finding.facts.get("fields")
    if entry is None or not fields or entry.model is not model:
        return None
    site = grid_spec_site(project, entry)
    if site is None:
        raise CannotFix("the launch's grid spec was not found")
    spec_model, spec = site
    builder = FixBuilder(project)
    moved = []
    for name, node in fields:
        if _set_by(project, spec_model, spec, name):
            raise CannotFix(f"the grid spec has {name} of its own: which of the two is meant is not known")
        keyword = model.parents.get(node)
        if not (isinstance(keyword, ast.keyword) and keyword in entry.node.keywords):
            raise CannotFix(f"{name} is not written at the launch")
        code = ast.get_source_segment(model.text, node)
        in_spec = code_in_spec(builder, spec_model, spec, entry, code) if code is not None else None
        if in_spec is None:
            raise CannotFix(f"the grid spec is built where the names of {name} mean something else")
        moved.append((name, in_spec))
    spec_file, _ = builder.file(spec_model)
    target = spec_file.find_ast(spec_model, spec, cst.Call)
    launch_file, _ = builder.file(model)
    launch = launch_file.find_ast(model, entry.node, cst.Call)
    if target is None or launch is None:
        raise CannotFix("the launch or its grid spec was not found")

    def into_spec(updated: cst.Call) -> cst.Call:
        for name, code in moved:
            empty = next((i for i, a in enumerate(updated.args) if a.keyword is not None and a.keyword.value == name),
                         None)
            if empty is None:
                updated = call_with_keyword(updated, name, code)
            else:  # `scratch_shapes=()` written there: it takes the moved value
                arguments = list(updated.args)
                arguments[empty] = arguments[empty].with_changes(value=expression(code))
                updated = updated.with_changes(args=arguments)
        return updated

    def out_of_launch(updated: cst.Call) -> cst.Call:
        for name, _ in moved:
            updated = without_keyword(updated, name, name)
        return updated

    spec_file.rewrite(target, into_spec)
    launch_file.rewrite(launch, out_of_launch)
    names = " and ".join(name for name, _ in moved)
    return builder.fix(f"pallas-lsp ({finding.code}): Move {names} into the grid spec{_built_in(model, spec_model, spec, entry)}",
                       "safe", preferred=True)


def _built_in(model, spec_model, spec: ast.Call, entry) -> str:
    """` (built in _grid_spec of specs.py)` where the grid spec is built in another function or module."""
    import os

    factory = spec_model.enclosing_function(spec)
    named = getattr(factory, "name", None)
    if spec_model is model and factory is model.enclosing_function(entry.node):
        return ""
    where = f"built in {named}" if named else "built"
    return f" ({where} of {os.path.basename(spec_model.path)})" if spec_model is not model else f" ({where})"


def _set_by(project, model, spec: ast.Call, name: str) -> bool:
    """Does the grid spec call set `name` (positionally or by keyword) to anything but an empty `()` / `[]`?"""
    fields = _positions(project, model, spec)
    position = fields.index(name) if name in fields else None
    if position is not None and len(spec.args) > position:
        written = spec.args[position]
    else:
        written = next((k.value for k in spec.keywords if k.arg == name), None)
    if written is None:
        return False
    if position is not None and len(spec.args) > position:
        return True  # written in its place: left to the author
    return not (isinstance(written, (ast.List, ast.Tuple)) and not written.elts)


def _positions(project, model, spec: ast.Call) -> tuple[str, ...]:
    """The grid spec constructor's parameters in order (`GRID_SPECS` gives where scratch_shapes is)."""
    fields = ("grid", "in_specs", "out_specs", "scratch_shapes")
    return ("num_scalar_prefetch", *fields) if GRID_SPECS.get(constructor(project, model, spec)) == 4 else fields
