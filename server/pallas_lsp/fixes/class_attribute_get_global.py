"""Fix (PAL008): a `get_global` made in a class body at import time (`class Signals: DONE = pl.get_global(T)`)
and read as `Signals.DONE` by kernel bodies: the attribute keeps the type, and each body asks for its semaphore.

    class Signals:                                 class Signals:
        DONE = pl.get_global(REGULAR)                  DONE = REGULAR

    def body(x_ref, o_ref):               ->       def body(x_ref, o_ref):
        pl.semaphore_signal(Signals.DONE)              done = pl.get_global(Signals.DONE)
        pl.semaphore_wait(Signals.DONE)                pl.semaphore_signal(done)
                                                       pl.semaphore_wait(done)

At import the get_global runs outside any kernel (`Evaluation rule for 'get_global' not implemented`); the
kernels meant one semaphore per launch, which a get_global in the body is (one per body: every read of the
attribute in a body is that one semaphore). Only where the class is at module level, binds the attribute
once, every read of the attribute (`Cls.NAME`, or `self.NAME` in a method of the class; nothing else named
NAME as an attribute) is in the body of Mosaic GPU launches only, and no importer names the class.
"""

from __future__ import annotations

import ast

import libcst as cst

from .closed_over_get_global import _check_body, _outermost_below
from .kernel_edits import CannotFix, FixBuilder, replace_expression, unique_name


def fix(project, model, finding):
    call = finding.facts.get("get_global")
    if call is None or finding.facts.get("model") is not model:
        return None
    statement = model.parents.get(call)
    owner = model.parents.get(statement)
    if not (isinstance(owner, ast.ClassDef) and owner in model.tree.body and isinstance(statement, ast.Assign)
            and statement.value is call and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)):
        return None
    name, cls = statement.targets[0].id, owner.name
    if sum(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(owner)) != 1:
        raise CannotFix(f"{cls}.{name} is bound more than once")
    reads = [n for n in ast.walk(model.tree) if isinstance(n, ast.Attribute) and n.attr == name]
    binding = model.module_binding(cls)
    if not reads or any(not (isinstance(r.value, ast.Name) and isinstance(r.ctx, ast.Load) and (
            (r.value.id == cls and model.lookup(cls, model.scope_of(r), r.lineno) is binding)
            or _own_instance(model, r.value, owner))) for r in reads):
        raise CannotFix(f"{name} is read other than as {cls}.{name} (or self.{name} in {cls}), where it may be "
                        "another object's")
    if project.importers_mentioning(model, cls):
        raise CannotFix(f"a module importing this one names {cls}")
    bodies: dict[int, ast.FunctionDef] = {}
    for read in reads:
        body = _outermost_below(model, read, None)
        if not isinstance(body, ast.FunctionDef):
            raise CannotFix(f"{cls}.{name} is read outside a kernel body")
        bodies[id(body)] = body
    type_code = ast.get_source_segment(model.text, call.args[0])
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    pallas = imports.name("jax.experimental.pallas")
    for body in bodies.values():
        local = unique_name(model, body, name.lower())
        _check_body(project, model, call, local, body, body.name)
        receivers = set()
        for read in reads:
            if _outermost_below(model, read, None) is body:
                replace_expression(builder, model, read, local)
                receivers.add(read.value.id)
        if len(receivers) != 1:
            raise CannotFix(f"{body.name} reads {name} through {' and '.join(sorted(receivers))}")
        receiver = receivers.pop()
        definition = file.function(body)
        if definition is None or not isinstance(definition.body, cst.IndentedBlock):
            raise CannotFix("the body was not found")
        allocate = cst.parse_statement(f"{local} = {pallas}.get_global({receiver}.{name})\n")
        docstring = (isinstance(body.body[0], ast.Expr) and isinstance(body.body[0].value, ast.Constant)
                     and isinstance(body.body[0].value.value, str))

        def change_body(updated: cst.FunctionDef, allocate=allocate, at=1 if docstring else 0) -> cst.FunctionDef:
            lines = list(updated.body.body)
            lines[at:at] = [allocate]
            return updated.with_changes(body=updated.body.with_changes(body=lines))

        file.rewrite(definition, change_body)
    replace_expression(builder, model, call, type_code)
    names = ", ".join(b.name for b in bodies.values())
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for {cls}.{name}'s semaphore in {names}; the class "
                       "attribute keeps its type", "safe", preferred=True)


def _own_instance(model, name: ast.Name, owner: ast.ClassDef) -> bool:
    """`name` is the instance (first parameter) of a method of `owner` (`self` in `self.DONE`)."""
    binding = model.lookup(name.id, model.scope_of(name), name.lineno)
    function = model.parents.get(model.parents.get(binding.node)) if binding is not None else None
    return (binding is not None and binding.kind == "param" and isinstance(function, ast.FunctionDef)
            and model.parents.get(function) is owner and not function.decorator_list
            and [*function.args.posonlyargs, *function.args.args][:1] == [binding.node])
