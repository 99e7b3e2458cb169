"""Fix (PAL001): buffers asked for by a comprehension of `get_global`s become one scratch tree of `plgpu.kernel`.

    def _body(self, x_ref, y_ref):                                   def _body(self, x_ref, y_ref, **bufs):
        bufs = {name: pl.get_global(kind)                  ->            ...
                for name, kind in self.smem.items()}
        ...                                                          plgpu.kernel(self._body, out_type=...,
    plgpu.kernel(self._body, out_type=...)                                        scratch_types=dict(self.smem))

Each item is a buffer of its own: one scratch parameter in place of the call would make them all the same
buffer. `plgpu.kernel` allocates a dict of scratch types as keyword arguments of the body (`**bufs`), a list as
trailing positional ones (`*bufs`); jax 0.12 lowers both (plgpu.kernel's `run_scoped(..., *scratch_types)` or
`**scratch_types`). Only for `name = {k: pl.get_global(T) for ...}` (or `[pl.get_global(T) for ...]`) written in
the launched body itself, one `for` clause and no `if`, a launch with no scratch yet, and the iterated value
written the same at every launch.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.iteration import iterated
from ..analysis.values import Const, MemType
from .kernel_edits import CannotFix, FixBuilder, remove_statement
from .sites import single_body_launches
from .type_in_scope import type_at_launches

_COMPREHENSIONS = (ast.DictComp, ast.ListComp)


def comprehension_around(model, call: ast.Call) -> ast.AST | None:
    """The comprehension (list, set, dict, generator) the get_global is written in, if any."""
    node = model.parents.get(call)
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return node
        node = model.parents.get(node)
    return None


def runs_once(project, model, comprehension: ast.AST) -> bool:
    """The comprehension makes one item (`[pl.get_global(T) for _ in range(1)]`, or over one known item):
    its one get_global is one buffer, as the fixes that move a get_global take it."""
    if len(comprehension.generators) != 1 or comprehension.generators[0].ifs:
        return False
    iterable = comprehension.generators[0].iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range" \
            and len(iterable.args) == 1 and not iterable.keywords and model.lookup("range", model.scope_of(iterable),
                                                                                  iterable.lineno) is None:
        count = project.evaluator.value(model, iterable.args[0])
        return isinstance(count, Const) and count.value == 1
    items = iterated(lambda e: project.evaluator.value(model, e), iterable)
    return items is not None and len(items) == 1


def many_items(project, model, call: ast.Call) -> bool:
    """The get_global is written in a comprehension that may make more than one item: each a buffer of its own."""
    comprehension = comprehension_around(model, call)
    return comprehension is not None and not runs_once(project, model, comprehension)


def fix(project, model, call, value, code: str):
    comprehension = comprehension_around(model, call)
    if comprehension is None or code != "PAL001" or not isinstance(value, MemType) \
            or runs_once(project, model, comprehension):
        return None
    if value.space not in ("smem", "tmem"):
        raise CannotFix("a comprehension of get_globals of what is not scratch memory")
    element = comprehension.value if isinstance(comprehension, ast.DictComp) else getattr(comprehension, "elt", None)
    if _unpacked_names(model, comprehension) is not None and element is call and len(call.args) == 1 \
            and not call.keywords:
        return _unpacked_fix(project, model, call, comprehension, code)
    if not isinstance(comprehension, _COMPREHENSIONS) or element is not call or len(call.args) != 1 or call.keywords:
        raise CannotFix("the get_global is not the item of a list or dict comprehension")
    clause = comprehension.generators[0]
    if len(comprehension.generators) != 1 or clause.ifs or clause.is_async:
        raise CannotFix("the comprehension has more than one `for`, or an `if`")
    statement = model.parents.get(comprehension)
    function = model.enclosing_function(comprehension)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and isinstance(function, ast.FunctionDef)):
        raise CannotFix("the comprehension is not assigned to a name in the kernel body")
    name = statement.targets[0].id
    arguments = function.args
    if len(model.scopes[function].bindings.get(name, [])) != 1 or arguments.vararg or arguments.kwarg \
            or arguments.posonlyargs or (arguments.kwonlyargs and isinstance(comprehension, ast.ListComp)):
        raise CannotFix(f"{name} is bound again, or {function.name} already takes *args or **kwargs")
    entries = single_body_launches(project, model, function)
    if not entries or any(e.api != "plgpu.kernel" or e.kernel.kwarg("scratch_types") or e.model is not model
                          or not isinstance(e.node, ast.Call) for e in entries):
        raise CannotFix("the body is not launched by plgpu.kernel calls of this module without scratch")
    scratch = _scratch_code(project, model, comprehension, clause, call, entries)
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    definition = file.function(function)
    if definition is None:
        raise CannotFix("the kernel body was not found")
    spread = cst.Param(cst.Name(name))
    if isinstance(comprehension, ast.DictComp):
        file.rewrite(definition, lambda d: d.with_changes(params=d.params.with_changes(star_kwarg=spread)))
    else:
        file.rewrite(definition, lambda d: d.with_changes(params=d.params.with_changes(star_arg=spread)))
    remove_statement(builder, model, statement)
    for entry in entries:
        launch = file.find_ast(model, entry.node, cst.Call)
        if launch is None:
            raise CannotFix("the launch was not found")
        file.rewrite(launch, lambda updated: _with_scratch(updated, scratch))
    kind = "dict" if isinstance(comprehension, ast.DictComp) else "list"
    return builder.fix(f"pallas-lsp ({code}): Allocate the {kind} {name} as scratch (scratch_types)",
                       "safe", preferred=True)


def _scratch_code(project, model, comprehension, clause: ast.comprehension, call: ast.Call, entries) -> str:
    """The scratch tree as the launches write it: `dict(X)` / `list(X)` for the items of X as they are,
    else the comprehension with each get_global's argument in its place."""
    bound = {n.id for n in ast.walk(clause.target) if isinstance(n, ast.Name)}
    launch_scope = model.scope_of(entries[0].node)
    inside_iterable = {id(n) for n in ast.walk(clause.iter)}
    for node in ast.walk(comprehension):
        if isinstance(node, ast.Name) and node.id not in bound and id(node) not in inside_iterable and \
                model.lookup(node.id, model.scope_of(node), node.lineno) is not \
                model.lookup(node.id, launch_scope, entries[0].node.lineno):
            raise CannotFix(f"{node.id} means something else at the launch")
    iterable = clause.iter
    items = isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and \
        iterable.func.attr == "items" and not iterable.args and not iterable.keywords
    argument = call.args[0]
    if isinstance(comprehension, ast.DictComp) and items and _pair(clause.target, comprehension.key, argument):
        carried = type_at_launches(project, model, iterable.func.value, entries)
        if carried is not None:
            return f"dict({carried})"
    if isinstance(comprehension, ast.ListComp) and isinstance(clause.target, ast.Name) and \
            isinstance(argument, ast.Name) and argument.id == clause.target.id:
        carried = type_at_launches(project, model, iterable, entries)
        if carried is not None:
            return f"list({carried})"
    carried = type_at_launches(project, model, iterable, entries)
    if carried is None:
        raise CannotFix(f"{model.segment(iterable, 40)} cannot be written at the launch")
    target = model.segment(clause.target)
    item = model.segment(argument)
    if isinstance(comprehension, ast.DictComp):
        return f"{{{model.segment(comprehension.key)}: {item} for {target} in {carried}}}"
    return f"[{item} for {target} in {carried}]"


def _pair(target: ast.AST, key: ast.AST, value: ast.AST) -> bool:
    """`k, v` taken as `{k: pl.get_global(v) ...}`: each item as it is."""
    return isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(
        isinstance(t, ast.Name) and isinstance(e, ast.Name) and t.id == e.id
        for t, e in zip(target.elts, (key, value)))


def _with_scratch(call: cst.Call, code: str) -> cst.Call:
    from .kernel_edits import call_with_keyword

    return call_with_keyword(call, "scratch_types", code)


def _unpacked_names(model, comprehension: ast.AST) -> list[str] | None:
    """`a, b = (pl.get_global(t) for t in TYPES)` (or a list comprehension): the names each buffer is unpacked
    into; None for another form."""
    statement = model.parents.get(comprehension)
    if not isinstance(comprehension, (ast.GeneratorExp, ast.ListComp)) or not isinstance(statement, ast.Assign) \
            or len(statement.targets) != 1 or not isinstance(statement.targets[0], (ast.Tuple, ast.List)):
        return None
    names = statement.targets[0].elts
    if not names or not all(isinstance(n, ast.Name) for n in names):
        return None
    return [n.id for n in names]


def _unpacked_fix(project, model, call: ast.Call, comprehension: ast.AST, code: str):
    """Each unpacked name becomes a new last positional parameter of the launched body, and the launch's scratch
    gets the comprehension's items in their order (`*cfg.barrier_types`): one buffer per name, as before."""
    from .allocate_as_scratch import _before_keyword_bound
    from .kernel_edits import add_parameter, check_parameters, edit_sequence_keyword
    from ..analysis.kernel_model import SCRATCH_KEYWORDS

    names = _unpacked_names(model, comprehension)
    statement = model.parents.get(comprehension)
    clause = comprehension.generators[0]
    if len(comprehension.generators) != 1 or clause.ifs or clause.is_async:
        raise CannotFix("the comprehension has more than one `for`, or an `if`")
    function = model.enclosing_function(comprehension)
    if not isinstance(function, ast.FunctionDef) or model.parents.get(statement) is not function:
        raise CannotFix("the unpacking is not a statement of the kernel body itself")
    check_parameters(function)
    if any(len(model.scopes[function].bindings.get(name, [])) != 1 for name in names):
        raise CannotFix("a name the buffers are unpacked into is bound again")
    entries = single_body_launches(project, model, function)
    if not entries or any(e.api not in ("plgpu.kernel", "pl.pallas_call") or e.model is not model
                          or not isinstance(e.node, ast.Call) or e.kernel.node is not e.node for e in entries):
        raise CannotFix("the body is not launched by plgpu.kernel or pl.pallas_call calls of this module")
    if len({e.api for e in entries}) != 1:
        raise CannotFix("the body is launched by different factories")
    scratch = _scratch_code(project, model, comprehension, clause, call, entries)
    argument = call.args[0]
    carried = type_at_launches(project, model, clause.iter, entries) if isinstance(clause.target, ast.Name) \
        and isinstance(argument, ast.Name) and argument.id == clause.target.id else None
    items = carried if carried is not None else f"({scratch[1:-1]})"  # each item as it is, else as made
    builder = FixBuilder(project)
    at = _before_keyword_bound(function, entries)
    for offset, name in enumerate(names):
        add_parameter(builder, model, function, name, None if at is None else at + offset)
    remove_statement(builder, model, statement)
    keyword = SCRATCH_KEYWORDS[entries[0].api].keyword
    for entry in entries:
        edit_sequence_keyword(builder, entry, keyword, f"*{items}", first=False, add_if_missing=True)
    return builder.fix(f"pallas-lsp ({code}): Allocate {', '.join(names)} as scratch ({keyword})", "safe",
                       preferred=True)
