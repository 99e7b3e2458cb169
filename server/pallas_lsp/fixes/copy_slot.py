"""Which semaphore of an array a TPU copy given it whole is meant to use (PAL005's fix, index_semaphore): the
index of the buffer slot the copy fills.

    pltpu.make_async_copy(hbm_ref.at[page], vmem_buf.at[slot], sems)     ->   ..., sems.at[slot])
    Descriptor(hbm_ref, kv_bufs.at[buf_idx], sems, ...)                    ->   ..., sems.at[buf_idx], ...)

Double-buffered kernels allocate a scratch buffer and a DMA semaphore array with one slot each
(`pltpu.VMEM((2, ...))`, `pltpu.SemaphoreType.DMA((2,))`) and give each copy the slot's buffer and the slot's
semaphore, with the same index. Where the semaphore is handed on whole in one place only (a copy's call, or the
call of a descriptor class or helper that makes the copies: paged attention's `MultiPageAsyncCopyDescriptor`)
and, in that same call, exactly one argument is a view of a scratch buffer of the kernel indexed first by one
expression (`kv_bufs.at[buf_idx]`, `src = acc_ref.bitcast(u8).at[slot, i]` through a name), that expression is
the slot: `sems.at[slot]`. Unsafe: the pairing is how such kernels are written, not something the code says.
"""

from __future__ import annotations

import ast

from ..analysis.frames import terminal_name
from ..analysis.kernel_args import kernel_parameters
from ..analysis.values import Func, Partial

_VIEWS = ("bitcast", "reshape", "reinterpret")  # ref methods that keep the slot dimension's meaning


def _hand_off(body_model, function: ast.AST, param: ast.arg) -> ast.Name | None:
    """The one read of the semaphore parameter not indexed with `.at[]`, as an argument of a call."""
    whole = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == param.arg and isinstance(node.ctx, ast.Load)):
            continue
        binding = body_model.lookup(node.id, body_model.scope_of(node), node.lineno)
        if binding is None or binding.node is not param:
            continue
        parent = body_model.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr == "at":
            continue
        whole.append(node)
    if len(whole) != 1:
        return None
    parent = body_model.parents.get(whole[0])
    if isinstance(parent, ast.keyword):
        parent = body_model.parents.get(parent)
    return whole[0] if isinstance(parent, ast.Call) and parent.func is not whole[0] else None


def _held(model, node: ast.AST, depth: int = 0) -> ast.AST:
    """What a name holds where it is assigned once in its function (`src = acc_ref.at[slot, i]`)."""
    if isinstance(node, ast.Name) and depth < 4:
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        assign = getattr(binding, "node", None)
        if binding is not None and binding.kind == "assign" and isinstance(assign, ast.Assign) \
                and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name):
            scope = model.enclosing_function(assign) or model.tree
            stores = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == node.id
                      and not isinstance(n.ctx, ast.Load)]
            if len(stores) == 1:
                return _held(model, assign.value, depth + 1)
    return node


def _root_parameter(model, node: ast.AST) -> ast.arg | None:
    """The body parameter a ref view comes from, through `.bitcast(...)`-like views and names assigned once."""
    node = _held(model, node)
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS:
        node = _held(model, node.func.value)
    if not isinstance(node, ast.Name):
        return None
    binding = model.lookup(node.id, model.scope_of(node), node.lineno)
    return binding.node if binding is not None and binding.kind == "param" else None


def _slot_index(model, argument: ast.AST, scratch: set[int], leading: dict[int, int] | None = None,
                slots: int | None = None) -> str | None:
    """`i` where the argument is `buffer.at[i, ...]` of a scratch buffer (through names assigned once). Not a
    range of rows (`buffer.at[pl.ds(h * half, half)]`: the copy fills part of one buffer, not a slot), nor a
    buffer whose first dimension is known and is not as long as the semaphore array (`leading`, `slots`)."""
    view = _held(model, argument)
    if not (isinstance(view, ast.Subscript) and isinstance(view.value, ast.Attribute) and view.value.attr == "at"):
        return None
    root = _root_parameter(model, view.value.value)
    if root is None or id(root) not in scratch:
        return None
    if leading and slots is not None and leading.get(id(root)) not in (None, slots):
        return None
    first = view.slice.elts[0] if isinstance(view.slice, ast.Tuple) and view.slice.elts else view.slice
    if isinstance(first, (ast.Slice, ast.Starred)) or (isinstance(first, ast.Constant) and first.value is Ellipsis):
        return None
    held = _held(model, first)
    if isinstance(held, ast.Call) and terminal_name(held.func) in _RANGES:
        return None
    return ast.unparse(first)


_RANGES = ("ds", "dslice", "Slice", "slice")  # pl.ds(start, size): rows of the buffer, no slot of it


def slot_of(project, use, shape, kernel, source) -> tuple[object, ast.Name, str] | None:
    """(module, the semaphore's whole read, the slot's index code) for the copy `use` of a scratch semaphore array
    `source`; None where no one slot is clearly meant."""
    body = kernel.entry.body
    if body is None or not isinstance(source, ast.arg) or use.indices != 0 or len(shape) != 1:
        return None
    params = kernel_parameters(project, kernel.entry)
    if not any(p.node is source and p.role == "scratch" for p in params):
        return None
    scratch = {id(p.node) for p in params if p.role == "scratch" and p.node is not source}
    leading = {id(p.node): p.shape[0] for p in params if p.role == "scratch" and p.shape}
    model, function, param = body.model, body.node, source
    for _ in range(4):  # through functions it is handed on to whole (paged attention's inline_seq_dim body)
        load = _hand_off(model, function, param)
        if load is None:
            handed = _handed_to_one_function(project, model, function, param, scratch)
            if handed is None:
                return None
            model, function, param, scratch = handed
            continue
        call = model.parents.get(load)
        if isinstance(call, ast.keyword):
            call = model.parents.get(call)
        others = [a for a in [*call.args, *(k.value for k in call.keywords)] if a is not load]
        slots = {index for a in others if (index := _slot_index(model, a, scratch, leading, shape[0])) is not None}
        if len(slots) == 1:
            break
        handed = _handed_to(project, model, call, load, scratch)
        if slots or handed is None:
            return None
        model, function, param, scratch = handed
    else:
        return None
    return model, load, slots.pop()


def _handed_to_one_function(project, model, function, param, scratch):
    """Where every whole read of the semaphore parameter is an argument of a call of one user function (a
    double-buffered stream's `stream.copy(src, slots, sems, i)`, called for the first chunk and in the loop),
    in the same place, with the same scratch views: that function's `_handed_to`; None otherwise."""
    reads = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == param.arg
             and isinstance(node.ctx, ast.Load)
             and getattr(model.lookup(node.id, model.scope_of(node), node.lineno), "node", None) is param]
    handed = []
    for node in reads:
        call = model.parents.get(node)
        if not (isinstance(call, ast.Call) and node in call.args):
            return None
        handed.append(_handed_to(project, model, call, node, scratch))
    if not handed or any(h is None for h in handed):
        return None
    first = handed[0]
    if any(h[1] is not first[1] or h[2] is not first[2] or h[3] != first[3] for h in handed):
        return None
    return first


def _handed_to(project, model, call: ast.Call, load: ast.Name, scratch: set[int]):
    """(module, function, parameter, scratch parameters) of a user function `call` calls, the semaphore handed to
    `parameter`; the scratch parameters, those handed a view of a scratch buffer. None where not known."""
    func = project.evaluator.value(model, call.func)
    while isinstance(func, Partial):
        func = func.func
    if not (isinstance(func, Func) and isinstance(func.node, ast.FunctionDef)) \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    spec = func.node.args
    positional = [*spec.posonlyargs, *spec.args]
    if func.self_value is not None:  # a method called on its object (`stream.copy(...)`): `self` is bound
        positional = positional[1:]
    by_name = {p.arg: p for p in [*positional, *spec.kwonlyargs]}
    bound = [*zip(positional, call.args), *((by_name.get(k.arg), k.value) for k in call.keywords)]
    target = next((p for p, a in bound if a is load), None)
    if target is None:
        return None
    handed_scratch = {id(p) for p, a in bound if p is not None and a is not load
                      and id(_root_parameter(model, a)) in scratch}
    return func.model, func.node, target, handed_scratch
