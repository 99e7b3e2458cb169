"""Fix: a helper's comprehension of `get_global`s becomes the kernel's trailing scratch, handed to the helper.

    class RingSemaphores(NamedTuple):                      class RingSemaphores(NamedTuple):
      ...                                                    ...
      @classmethod                                           @classmethod
      def allocate(cls):                              ->     def allocate(cls, sems):
        return cls(*(pl.get_global(DMA)                        return cls(*sems)
                     for _ in cls._fields))
                                                           def kernel(x_ref, o_ref, *sems, cfg):
    def kernel(x_ref, o_ref, *, cfg):                        sems = RingSemaphores.allocate(sems)
      sems = RingSemaphores.allocate()                     pl.pallas_call(..., scratch_shapes=[pltpu.SemaphoreType.DMA] * 3)
    pl.pallas_call(...)

Each item is a buffer of its own, as before: the launch allocates one scratch entry per item, which the body
takes as `*name` and passes to the helper in place of the comprehension. The number of items is written as
the launch can: the comprehension's iterable carried there (`[T for _ in range(cfg.stages)]`), or a count that
holds for every configuration (a `NamedTuple`'s fields, a literal). Only for a helper the bodies call (a
function or a classmethod / method of a module-level class), a launch with no scratch or a list of it written
there (the new entries go last: `[tile, *[plgpu.Barrier(...) for _ in range(n)]]`), and a body with no `*args`.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..analysis.values import ClassValue, Func, MemType
from .kernel_edits import CannotFix, FixBuilder, call_with_keyword, edit_sequence_keyword, thread_through_helper
from .scratch_comprehension import comprehension_around
from .sites import global_use, plan
from .type_in_scope import type_at_launches


def fix(project, model, call, value, code: str):
    comprehension = comprehension_around(model, call)
    if comprehension is None or not isinstance(comprehension, (ast.GeneratorExp, ast.ListComp)) \
            or comprehension.elt is not call or not isinstance(value, MemType) or len(call.args) != 1 or call.keywords:
        return None
    clause = comprehension.generators[0]
    if len(comprehension.generators) != 1 or clause.ifs or clause.is_async:
        raise CannotFix("the comprehension has more than one `for`, or an `if`")
    use = global_use(model, call)
    if use is None or model.enclosing_function(comprehension) is not use.function:
        return None
    where = plan(project, model, use)
    if where is None or where.helper is None or len(where.bodies) != 1 or where.siblings or where.moved:
        return None  # in the body itself: scratch_comprehension's
    body_model, body, entries = where.bodies[0]
    if body.args.vararg is not None or body.args.kwarg is not None or body.args.posonlyargs:
        raise CannotFix(f"{body.name} already takes *args or **kwargs")
    apis = {e.api for e in entries}
    if len(apis) != 1 or not apis <= set(SCRATCH_KEYWORDS) or any(
            e.model is not body_model or not isinstance(e.node, ast.Call) or e.kernel.node is not e.node
            or not _scratch_listed(e, SCRATCH_KEYWORDS[e.api].keyword) or e.kernel.kwarg("grid_spec") is not None
            for e in entries):
        raise CannotFix("the body's launches are not calls of this module whose scratch is a list written there")
    keyword = SCRATCH_KEYWORDS[entries[0].api].keyword
    scratch = _scratch_code(project, model, call, clause, entries)
    builder = FixBuilder(project)
    name = _free_name(body, where.helper)
    thread_through_helper(builder, where, name)
    helper_file, _ = builder.file(model)
    made = helper_file.find_ast(model, comprehension, cst.BaseExpression)
    if made is None:
        raise CannotFix("the comprehension was not found")
    helper_file.rewrite(made, lambda updated: cst.Name(name))  # `cls(*(... for _ in ...))` -> `cls(*scratch)`
    file, _ = builder.file(body_model)
    definition = file.function(body)
    if definition is None:
        raise CannotFix("the kernel body was not found")
    file.rewrite(definition, lambda d: d.with_changes(params=d.params.with_changes(star_arg=cst.Param(cst.Name(name)))))
    for entry in entries:
        if entry.kernel.kwarg(keyword) is not None:  # after the scratch already listed: the body's last refs
            edit_sequence_keyword(builder, entry, keyword, f"*{scratch}", first=False)
            continue
        launch = file.find_ast(body_model, entry.node, cst.Call)
        if launch is None:
            raise CannotFix("the launch was not found")
        file.rewrite(launch, lambda updated: call_with_keyword(updated, keyword, scratch))
    return builder.fix(f"pallas-lsp ({code}): Allocate the buffers {where.helper.name}() makes as scratch "
                       f"({keyword}), which {body.name} passes to it", "safe", preferred=True)


def _scratch_listed(entry, keyword: str) -> bool:
    """The launch gives no scratch, or a list or tuple display of positional entries (no dict, no `*spread`)."""
    found = entry.kernel.kwarg(keyword)
    node = found[1] if found else None
    return found is None or (isinstance(node, (ast.List, ast.Tuple))
                             and not any(isinstance(e, ast.Starred) for e in node.elts))


def _scratch_code(project, model, call: ast.Call, clause: ast.comprehension, entries) -> str:
    """The scratch list as the launches write it: one entry of the item's type per item."""
    item = type_at_launches(project, model, call.args[0], entries)
    if item is None or any(isinstance(n, ast.Name) and n.id in _targets(clause) for n in ast.walk(call.args[0])):
        raise CannotFix("the buffers' type cannot be written at the launch")
    iterable = type_at_launches(project, model, clause.iter, entries)
    if iterable is not None:
        return f"[{item} for _ in {iterable}]"
    count = _static_count(project, model, clause.iter)
    if count is None:
        raise CannotFix("how many buffers the comprehension makes cannot be written at the launch")
    return f"[{item}] * {count}"


def _targets(clause: ast.comprehension) -> set[str]:
    return {n.id for n in ast.walk(clause.target) if isinstance(n, ast.Name)}


def _static_count(project, model, iterable: ast.expr) -> int | None:
    """How many items an iterable has in every configuration: a literal display, or a class's `_fields` (a
    `NamedTuple`'s annotated fields, read from the class body)."""
    if isinstance(iterable, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in iterable.elts):
        return len(iterable.elts)
    if isinstance(iterable, ast.Attribute) and iterable.attr == "_fields":
        owner = project.evaluator.value(model, iterable.value)
        if isinstance(owner, Func) and isinstance(owner.self_value, ClassValue):
            owner = owner.self_value
        cls = owner.node if isinstance(owner, ClassValue) else _classmethod_class(model, iterable.value)
        if cls is not None and any(isinstance(b, ast.Name) and b.id == "NamedTuple" for b in cls.bases):
            return sum(isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) for s in cls.body)
    return None  # a value known here may hold for one configuration only: not written as a number


def _classmethod_class(model, node: ast.expr) -> ast.ClassDef | None:
    """The class of a classmethod's `cls` (its first parameter), for a classmethod of a module-level class."""
    if not isinstance(node, ast.Name):
        return None
    function = model.enclosing_function(node)
    owner = model.parents.get(function) if function is not None else None
    if not (isinstance(function, ast.FunctionDef) and isinstance(owner, ast.ClassDef)
            and any(isinstance(d, ast.Name) and d.id == "classmethod" for d in function.decorator_list)):
        return None
    first = function.args.args[0].arg if function.args.args else None
    return owner if first == node.id else None


def _free_name(body: ast.FunctionDef, helper: ast.FunctionDef) -> str:
    """`scratch`, or `scratch_2`, ..., a name neither the body nor the helper uses."""
    used = {n.id for f in (body, helper) for n in ast.walk(f) if isinstance(n, ast.Name)} | {
        a.arg for f in (body, helper) for a in ast.walk(f) if isinstance(a, ast.arg)}
    name, n = "scratch", 1
    while name in used:
        n += 1
        name = f"scratch_{n}"
    return name
