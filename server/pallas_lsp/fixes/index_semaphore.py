"""Fix (PAL005): a shaped semaphore signalled or waited on whole gets its `.at[...]` index (a get_global
result, or a scratch, operand or run_scoped parameter); a copy's, the index of the buffer slot it fills
(copy_slot), or `.at[0]` where the kernel uses the array for that copy alone.

Only where one index is the meaning-preserving choice for each missing dimension:
- a dimension of size 1 has one semaphore: `.at[0]` (safe);
- a dimension as long as a named grid or cluster axis whose index the kernel already holds in a
  variable (`block = lax.axis_index("blocks")`, visible at the signal): `.at[block]`, each block
  its own semaphore (unsafe: the kernel may have meant another one, so it is not applied without
  `--unsafe-fixes`).
Any other dimension has no known index, and too many indices no known one to drop: no fix. Also
none where the semaphore reaches the signal through a helper's parameter (the helper may be given
other semaphores).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import axis_sizes
from ..analysis.classes import enum_length, is_enum
from ..analysis.values import Api, ClassValue, Const
from . import copy_slot
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder

_AXIS_INDEX = ("jax.lax.axis_index", "lax.axis_index")


def _semaphore_argument(call: ast.Call) -> ast.expr | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in ("sem_or_view", "sem")), None)


def _only_binding(model, name: ast.Name):
    """The assignment `name` sees, if it is the only binding of that name in its scope."""
    binding = model.lookup(name.id, model.scope_of(name), name.lineno)
    if binding is None or binding.kind != "assign" or not isinstance(binding.node, ast.Assign):
        return None
    for scope, found in model.scopes.items():
        if any(b is binding for b in found.bindings.get(name.id, ())):
            return binding if len(found.bindings[name.id]) == 1 else None
    return None


def _comes_from(model, node: ast.expr, source: ast.AST, depth: int = 0) -> bool:
    """True when `node` is the semaphore `source` (a get_global call, or the body parameter holding it),
    through `.at[...]` and single-assignment names."""
    while isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "at":
        node = node.value.value
    if node is source:
        return True
    if isinstance(node, ast.Name) and depth < 8:
        seen = model.lookup(node.id, model.scope_of(node), node.lineno)
        if seen is not None and seen.kind == "param":
            return seen.node is source
        binding = _only_binding(model, node)
        return binding is not None and _comes_from(model, binding.value, source, depth + 1)
    return False


def _axis_variables(project, model, use_call: ast.Call) -> dict[str, set[str]]:
    """{axis name: variables visible at `use_call` bound once to `lax.axis_index(axis)`}."""
    found: dict[str, set[str]] = {}
    for call in model.calls_named("axis_index"):
        assign = model.parents.get(call)
        if not (isinstance(assign, ast.Assign) and assign.value is call and len(assign.targets) == 1
                and isinstance(assign.targets[0], ast.Name) and len(call.args) == 1 and not call.keywords):
            continue
        callee = project.evaluator.value(model, call.func)
        axis = project.evaluator.value(model, call.args[0])
        if not (isinstance(callee, Api) and callee.name in _AXIS_INDEX and isinstance(axis, Const)
                and isinstance(axis.value, str)):
            continue
        name = assign.targets[0].id
        seen = model.lookup(name, model.scope_of(use_call), use_call.lineno)
        if seen is not None and seen.node is assign and _only_binding(model, assign.targets[0]) is not None:
            found.setdefault(axis.value, set()).add(name)
    return found


def _loop_variables(project, model, use_call: ast.AST) -> dict[int, set[str]]:
    """{length: variables of the Python loops `for v in range(length)` (statements or comprehensions) around
    `use_call` in its function}."""
    found: dict[int, set[str]] = {}
    function = model.enclosing_function(use_call)
    node = model.parents.get(use_call)
    while node is not None and node is not function:
        loops = [node] if isinstance(node, ast.For) else node.generators if isinstance(
            node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) else []
        for loop in loops:
            length = _range_length(project, model, loop.iter)
            if length is not None and isinstance(loop.target, ast.Name):
                found.setdefault(length, set()).add(loop.target.id)
        node = model.parents.get(node)
    return found


def _range_length(project, model, iterated: ast.expr) -> int | None:
    """n of `range(n)` / `range(0, n)` (the builtin, n known)."""
    if not (isinstance(iterated, ast.Call) and not iterated.keywords and 1 <= len(iterated.args) <= 2):
        return None
    func = iterated.func
    if not (isinstance(func, ast.Name) and func.id == "range"
            and model.lookup("range", model.scope_of(func), func.lineno) is None):
        return None
    bounds = [project.evaluator.value(model, a) for a in iterated.args]
    start = bounds[0].value if len(bounds) == 2 and isinstance(bounds[0], Const) else 0
    if isinstance(bounds[-1], Const) and type(bounds[-1].value) is int and start == 0:
        return bounds[-1].value
    return None


def _unused_enum_parameter(project, model, argument: ast.expr, missing: tuple) -> str | None:
    """`stage` where the semaphore is a parameter of a helper `def _raise(flags, stage: Stage)` that has one
    other parameter annotated with an Enum of as many members as the one missing dimension, and reads it
    nowhere: the index its author meant to write (`flags.at[stage]`)."""
    function = model.enclosing_function(argument)
    if len(missing) != 1 or not isinstance(argument, ast.Name) or not isinstance(function, ast.FunctionDef):
        return None
    seen = model.lookup(argument.id, model.scope_of(argument), argument.lineno)
    if seen is None or seen.kind != "param":
        return None
    spec = function.args
    candidates = []
    for param in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]:
        if param is seen.node or param.annotation is None:
            continue
        cls = project.evaluator.value(model, param.annotation)
        if not (isinstance(cls, ClassValue) and is_enum(project.evaluator, cls)):
            continue
        length = enum_length(project.evaluator, cls)
        read = any(isinstance(n, ast.Name) and n.id == param.arg for stmt in function.body for n in ast.walk(stmt))
        if isinstance(length, Const) and length.value == missing[0] and not read:
            candidates.append(param.arg)
    return candidates[0] if len(candidates) == 1 else None


def _index_for(size: int, sizes: dict[str, int], variables: dict[str, set[str]],
               loops: dict[int, set[str]] | None = None) -> tuple[str, bool] | None:
    """(index code, safe) for a missing dimension of `size`; None where no choice is clearly meant: the one
    variable the kernel holds for a grid axis of that length, or for a loop over as many slots."""
    if size == 1:
        return "0", True
    axes = [axis for axis, length in sizes.items() if length == size]
    held = {name for axis in axes for name in variables.get(axis, ())} | (loops or {}).get(size, set())
    if len(held) == 1 and (len(axes) <= 1):
        return next(iter(held)), False
    return None


def fix(project, model, finding):
    facts = finding.facts
    use, shape, kernel = (facts.get(key) for key in ("use", "shape", "kernel"))
    source = facts.get("get_global") or facts.get("semaphore")
    if use is None or shape is None or kernel is None or use.indices is None or use.indices >= len(shape):
        return None  # too many indices: which one to drop is not known
    if use.kind == "dma_dst":
        slot = copy_slot.slot_of(project, use, shape, kernel, source)
        if slot is not None:  # the index of the buffer slot the copy is given, unsafe
            builder = FixBuilder(project)
            _at_index(builder, slot[0], slot[1], [slot[2]])
            return _indexed_fix(builder, finding, use, [slot[2]], False)
        return _sole_copy_semaphore(project, model, finding, use, shape, kernel, source)
    if use.kind not in ("signal", "wait"):
        return None  # a copy's send semaphore: which one the receiving side waits on is not known here
    if use.model is not model or facts.get("model") is not model or not isinstance(use.node, ast.Call):
        return None
    argument = _semaphore_argument(use.node)
    if argument is None:
        return None
    if not _comes_from(model, argument, source):
        stage = _unused_enum_parameter(project, model, argument, shape[use.indices:])
        if stage is None:
            raise CannotFix("the semaphore reaches the signal or wait through a helper's parameter")
        chosen = [(stage, False)]
    else:
        sizes = axis_sizes(project, kernel.entry)
        variables = _axis_variables(project, model, use.node)
        loops = _loop_variables(project, model, use.node)
        chosen = [_index_for(size, sizes, variables, loops) for size in shape[use.indices:]]
    if any(choice is None for choice in chosen):
        raise CannotFix("no index is clearly meant for a dimension of the semaphore")
    indices = [code for code, _ in chosen]
    safe = all(is_safe for _, is_safe in chosen)
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    target = file.find_ast(model, argument, cst.BaseExpression)
    if target is None:
        raise CannotFix("the semaphore argument was not found")

    def elements(codes, last_comma=cst.MaybeSentinel.DEFAULT) -> list[cst.SubscriptElement]:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [cst.SubscriptElement(cst.Index(expression(code)), comma=comma if i < len(codes) - 1 else last_comma)
                for i, code in enumerate(codes)]

    def indexed(updated: cst.BaseExpression) -> cst.BaseExpression:
        if (isinstance(updated, cst.Subscript) and isinstance(updated.value, cst.Attribute)
                and updated.value.attr.value == "at" and not updated.lpar
                and all(isinstance(e.slice, cst.Index) and e.slice.star is None
                        and not isinstance(e.slice.value, cst.Tuple) for e in updated.slice)):
            old = list(updated.slice)  # sems.at[i] -> sems.at[i, j]
            old[-1] = old[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            return updated.with_changes(slice=[*old, *elements(indices)])
        base = updated
        if not isinstance(updated, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and not updated.lpar:
            base = updated.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Subscript(value=cst.Attribute(value=base, attr=cst.Name("at")), slice=elements(indices))

    file.rewrite(target, indexed)
    return _indexed_fix(builder, finding, use, indices, safe)


def _at_index(builder: FixBuilder, model, argument: ast.expr, indices: list[str]) -> None:
    """`argument` (a name or attribute) becomes `argument.at[indices]`."""
    file, _ = builder.file(model)
    target = file.find_ast(model, argument, cst.BaseExpression)
    if target is None or not isinstance(target, (cst.Name, cst.Attribute)):
        raise CannotFix("the semaphore argument was not found")
    file.rewrite(target, lambda updated: expression(f"{cst.Module([]).code_for_node(updated)}.at[{', '.join(indices)}]"))


def _sole_copy_semaphore(project, model, finding, use, shape, kernel, source):
    """A TPU copy given a whole semaphore array that nothing else in the body names (`make_async_copy(src, dst,
    sems)` of a `DMA((2,))`): any one of its semaphores is the copy's, the others are never used, so the first
    keeps what the kernel does (`sems.at[0]`, safe). Made in a loop over as many slots as the array has, the
    loop's variable (`sems.at[h]`, unsafe: one semaphore each, as its author most likely meant)."""
    copy = next((c for c in kernel.dma_copies if any(start is use.node for start in c.starts)), None)
    argument = next((node for role, node, not_ref in copy.semaphores if role == "dma_dst" and not_ref is None),
                    None) if copy is not None else None
    if argument is None or copy.model is not model or not isinstance(argument, ast.Name) or use.indices != 0:
        return None
    if not _comes_from(model, argument, source):
        raise CannotFix("the semaphore reaches the copy through a helper's parameter")
    function = model.enclosing_function(argument)
    named = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == argument.id]
    sem = next((s for s in kernel.semaphores if s.node is source), None)
    if named != [argument] or sem is not None and any(u.descriptor is not copy.call for u in sem.uses):
        raise CannotFix(f"{argument.id} is named elsewhere in the body: which semaphore the copy is meant to use "
                        "is not known")
    builder = FixBuilder(project)
    held = _loop_variables(project, model, argument).get(shape[0], set()) if len(shape) == 1 else set()
    if len(held) == 1:  # one copy per slot (`[make_async_copy(..., sems) for h in range(2)]`): each its own
        _at_index(builder, model, argument, [next(iter(held))])
        return _indexed_fix(builder, finding, use, [next(iter(held))], False)
    _at_index(builder, model, argument, ["0"] * len(shape))
    return _indexed_fix(builder, finding, use, ["0"] * len(shape), True)


def _indexed_fix(builder: FixBuilder, finding, use, indices: list[str], safe: bool):
    what = ", ".join(indices)
    verb = {"signal": "Signal", "wait": "Wait on"}.get(use.kind, "Give the copy")
    return builder.fix(f"pallas-lsp ({finding.code}): {verb} one semaphore: .at[{what}]",
                       "safe" if safe else "unsafe", preferred=safe)

