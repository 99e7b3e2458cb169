"""How a value made in a kernel (a get_global result, a semaphore) is used: passed to which call, at which
parameter, indexed how, through names, containers, helpers and their callers. The kernel model reads
these uses; rules never walk syntax themselves."""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import reads
from .classes import dataclass_fields
from .kernels import unwrap_function
from .launches import kernel_launches
from .model import child_nodes
from .reaching import reaching_bindings
from .values import Api, ClassValue, Func, Instance

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project


SEMAPHORE_OPS = {"pl.semaphore_signal": "signal", "pl.semaphore_wait": "wait", "pl.semaphore_read": "read",
                 "pltpu.semaphore_signal": "signal", "pltpu.semaphore_wait": "wait", "pltpu.semaphore_read": "read"}


# TPU copies: which argument (position or keyword) is the source (send) and which the destination
# (receive) semaphore (jax/_src/pallas/mosaic/primitives.py: AsyncCopyDescriptor(src, dst, dst_sem, src_sem)).
_DMA_SEMAPHORES = {
    "pltpu.make_async_copy": {2: "dma_dst", "sem": "dma_dst", "src_sem": "dma_src"},
    "pltpu.async_copy": {2: "dma_dst", "sem": "dma_dst", "src_sem": "dma_src"},
    "pltpu.make_async_remote_copy": {2: "dma_src", "send_sem": "dma_src", 3: "dma_dst", "recv_sem": "dma_dst"},
    "pltpu.async_remote_copy": {2: "dma_src", "send_sem": "dma_src", 3: "dma_dst", "recv_sem": "dma_dst"},
}


_DMA_STARTING = {"pltpu.async_copy", "pltpu.async_remote_copy"}  # these start the copy themselves
_SELECTABLE = {"dma_src", "dma_dst", "copy"}  # what a `pl.select_ref` of semaphores may be used for


_GENERIC_SEMAPHORE_OPS = {"pl.semaphore_signal": "signal", "pl.semaphore_wait": "wait", "pl.semaphore_read": "read",
                          "pltpu.get_barrier_semaphore": "barrier_semaphore"}


# What a kernel's semaphore ops (`KernelModel.semaphore_ops`) and copies (`dma_copies`) are calls of, each kept with
# the module of the call: a module calling none of them holds none (`RuleContext.calls_any`).
SEMAPHORE_OP_APIS = tuple(_GENERIC_SEMAPHORE_OPS)
COPY_APIS = tuple(_DMA_SEMAPHORES)


BARRIER_OPS = {"plgpu.barrier_wait", "plgpu.barrier_arrive"}
# Copies taking their barrier positionally too (jax 0.12: `copy_gmem_to_smem(src, dst, barrier)`): its position.
_COPY_BARRIER_AT = {"plgpu.copy_gmem_to_smem": 2, "plgpu.async_store_smem": 2}


_MAX_HELPER_DEPTH = 4


@dataclass(frozen=True)
class Use:
    """One place a get_global (or semaphore) result is used: `kind` is signal, wait, read, barrier, dma_src, dma_dst
    (a started copy's semaphores), copy (a copy only waited on here), select (one of the refs `pl.select_ref`
    chooses between; the chosen one's uses follow), returned or other."""

    kind: str
    model: "ModuleModel"
    node: ast.AST  # the call (or statement) that uses it
    indices: int | None  # how many indices `.at[...]` applied before this use (None: not known)
    live: bool  # the use keeps the get_global alive through dead-code elimination
    # The last `.at[...]` subscript applied before this use (in `model`), where JAX checks the index count.
    at: ast.AST | None = field(default=None, compare=False)
    # The `pl.select_ref(i, *refs)` the semaphore went through to this use, where JAX checks the refs agree.
    selected_by: ast.Call | None = field(default=None, compare=False)
    # A copy only waited on here ("copy"): which of its semaphores this is, "dma_src" or "dma_dst".
    role: str | None = field(default=None, compare=False)
    descriptor: ast.Call | None = field(default=None, compare=False)  # a copy's semaphore: the copy's call


def uses_of(project: "Project", model: "ModuleModel", node: ast.AST, indices: int | None = 0,
            depth: int = 0) -> list[Use]:
    """Where the value of expression `node` goes, following names, `.at[...]` and helper parameters."""
    parent = model.parents.get(node)
    if isinstance(parent, ast.Expr):
        return []
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and isinstance(getattr(parent, "target", None) or parent.targets[0], ast.Name):
        target = parent.target if isinstance(parent, ast.AnnAssign) else parent.targets[0]
        if isinstance(parent, ast.Assign) and len(parent.targets) != 1:
            return [Use("other", model, parent, indices, True)]
        return _name_uses(project, model, target.id, parent, indices, depth)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is node:
        held = _self_attribute(model, parent.targets[0])  # `self._sem = sem`: read back as `self._sem`
        loads = _attribute_loads(model, *held) if held is not None and depth < _MAX_HELPER_DEPTH else None
        if loads:
            return [use for load in loads for use in uses_of(project, model, load, indices, depth + 1)]
    if isinstance(parent, ast.NamedExpr):
        return _name_uses(project, model, parent.target.id, parent, indices, depth) + uses_of(
            project, model, parent, indices, depth)
    if isinstance(parent, ast.Attribute) and parent.attr == "at":
        subscript = model.parents.get(parent)
        if isinstance(subscript, ast.Subscript) and subscript.value is parent:
            count = len(subscript.slice.elts) if isinstance(subscript.slice, ast.Tuple) else 1
            if isinstance(subscript.slice, ast.Tuple) and any(isinstance(e, ast.Starred) for e in subscript.slice.elts):
                count = None
            more = None if indices is None or count is None else indices + count
            return [u if u.at is not None or u.model is not model else dataclasses.replace(u, at=subscript)
                    for u in uses_of(project, model, subscript, more, depth)]
        return [Use("other", model, parent, indices, True)]
    if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
        # `ref[...]`: a read, which DCE drops with a result that feeds nothing.
        return [Use("ref_read", model, parent, indices, bool(uses_of(project, model, parent, 0, depth)))]
    if isinstance(parent, ast.keyword):
        call = model.parents.get(parent)
        if isinstance(call, ast.Call):
            return _call_use(project, model, call, node, parent.arg, indices, depth)
    if isinstance(parent, ast.Call) and node in parent.args:
        return _call_use(project, model, parent, node, None, indices, depth)
    if isinstance(parent, ast.Return):
        func = model.enclosing_function(parent)
        return _caller_uses(project, model, func, indices, depth) or [Use("returned", model, parent, indices, True)]
    if isinstance(parent, ast.Lambda) and parent.body is node:
        return _caller_uses(project, model, parent, indices, depth) or [Use("other", model, parent, indices, True)]
    if isinstance(parent, ast.ListComp) and parent.elt is node and len(parent.generators) == 1:
        return _element_uses(project, model, parent, indices, depth)
    return [Use("other", model, parent if parent is not None else node, indices, True)]


def launch_operand(project: "Project", model: "ModuleModel", node: ast.AST) -> ast.Call | None:
    """The kernel launch in `model` that takes the value of expression `node` as an operand, directly or
    through a name bound to it (`sem = get_global(...)`; `kernel(x, sem)`); None where there is none. A launch
    takes its operands whatever its body does with them (jit drops no kernel's operand)."""
    launches = {id(launch.call) for launch in kernel_launches(project, model)}
    if not launches:
        return None
    parent = model.parents.get(node)
    loads = [node]
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        loads = loads_bound_by(model, parent, parent.targets[0].id)
    for load in loads:
        call = model.parents.get(load)
        if isinstance(call, ast.keyword):
            call = model.parents.get(call)
        if isinstance(call, ast.Call) and call.func is not load and id(call) in launches:
            return call
    return None


def loads_bound_by(model: "ModuleModel", assign: ast.Assign, name: str) -> list[ast.Name]:
    """The loads of `name` in the scope of `assign` that read the value `assign` binds to it."""
    scope = model.enclosing_function(assign) or model.tree
    return [load for load in _loads(model, scope, name)
            if getattr(model.lookup(name, model.scope_of(load), load.lineno), "node", None) is assign]


def _caller_uses(project, model, func: ast.AST | None, indices, depth) -> list[Use]:
    """Where a helper's return value goes in the calls of it in its module (JAX traces the helper inline, so
    a semaphore it returns is used, or dropped, there); [] where nothing here calls it by name."""
    if func is None or depth >= _MAX_HELPER_DEPTH:
        return []
    name = getattr(func, "name", None)
    binder = model.parents.get(func)
    if isinstance(func, ast.Lambda) and isinstance(binder, ast.Assign) and len(binder.targets) == 1 \
            and isinstance(binder.targets[0], ast.Name):
        name = binder.targets[0].id
    if name is None:
        return []
    uses: list[Use] = []
    for call in model.calls_named(name):
        callee = project.evaluator.value(model, call.func)
        if isinstance(callee, Func) and callee.node is func:
            uses.append(Use("called", model, call, indices, False))  # marks that a caller was found
            uses.extend(uses_of(project, model, call, indices, depth + 1))
    return uses


def _element_uses(project, model, container: ast.AST, indices, depth) -> list[Use]:
    """Uses of the elements of a list built by a comprehension: `sems = [get_global(...) for ...]`, `sems[0]`."""
    parent = model.parents.get(container)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return [Use("other", model, container, indices, True)]
    scope = model.enclosing_function(parent) or model.tree
    uses: list[Use] = []
    for load in _loads(model, scope, parent.targets[0].id):
        binding = model.lookup(load.id, model.scope_of(load), load.lineno)
        if binding is None or binding.node is not parent:
            continue
        subscript = model.parents.get(load)
        if isinstance(subscript, ast.Subscript) and subscript.value is load and isinstance(subscript.ctx, ast.Load):
            uses.extend(uses_of(project, model, subscript, indices, depth))
        else:
            uses.append(Use("other", model, subscript or load, indices, True))
    return uses


def _name_uses(project, model, name, binder, indices, depth) -> list[Use]:
    scope = model.enclosing_function(binder) or model.tree
    uses: list[Use] = []
    for node in _loads(model, scope, name):
        binding = model.lookup(name, model.scope_of(node), node.lineno)
        if binding is None:
            continue
        # A branch's binding reaches the loads after the `if` too (`if save_acc: acc = pl.get_global(...)`,
        # `else: acc = None`, then `acc[...]` in a closure): the one a load sees is the latest of those.
        if binding.node is binder or any(b.node is binder for b in reaching_bindings(model, binding, node, scope)):
            uses.extend(uses_of(project, model, node, indices, depth))
    return uses


def _loads(model: "ModuleModel", scope: ast.AST, name: str) -> list[ast.Name]:
    """Loads of `name` under `scope`, in source order: one walk per scope, kept with the module text
    (every get_global's uses, and every helper parameter they pass through, ask again)."""
    return reads.kept_walk(model, "name-loads", scope, lambda: _loads_by_name(scope)).get(name, [])


def _loads_by_name(scope: ast.AST) -> dict[str, list[ast.Name]]:
    by_name: dict[str, list[ast.Name]] = {}
    stack = [scope]  # any order: sorted below
    while stack:
        node = stack.pop()
        if node.__class__ is ast.Name:
            if node.ctx.__class__ is ast.Load:
                by_name.setdefault(node.id, []).append(node)
        else:
            stack.extend(child_nodes(node))
    for found in by_name.values():
        found.sort(key=lambda n: (n.lineno, n.col_offset))
    return by_name


def calls_barrier_use(project, model: "ModuleModel") -> bool:
    """Whether a call of `model` can be a "barrier" use (`_call_use`): a barrier op or a copy taking its
    barrier there (under any alias: `pallas_calls`), or an API given `barrier=`. A module holding none has
    no barrier use, whichever kernel runs its code, and the search of its importers' kernels (a config
    module naming "barrier" in a flag: 2.3 s of maxtext's check) is not needed for one."""
    from .kernels import pallas_calls

    if any(pallas_calls(project, model, api) for api in (*BARRIER_OPS, *_COPY_BARRIER_AT)):
        return True
    return any(any(k.arg == "barrier" for k in call.keywords)
               and isinstance(project.evaluator.value(model, call.func), Api) for call in model.calls)


def _call_use(project, model, call: ast.Call, arg: ast.AST, keyword: str | None, indices, depth) -> list[Use]:
    func = project.evaluator.value(model, call.func)
    if isinstance(func, Api):
        if func.name in SEMAPHORE_OPS and (keyword is None and call.args and call.args[0] is arg
                                           or keyword in ("sem_or_view", "sem")):
            kind = SEMAPHORE_OPS[func.name]
            live = kind != "read" or bool(uses_of(project, model, call, 0, depth))
            return [Use(kind, model, call, indices, live)]
        at = _COPY_BARRIER_AT.get(func.name)
        if func.name in BARRIER_OPS or keyword == "barrier" or (
                keyword is None and at is not None and len(call.args) > at and call.args[at] is arg):
            return [Use("barrier", model, call, indices, True)]
        if func.name == "pl.select_ref" and keyword is None and arg in call.args[1:]:
            # One of the refs it chooses between (a "select" use where it is chosen): used as the chosen one is by
            # a TPU copy, the only use JAX supports (a semaphore op given one fails for any refs, jax 0.12).
            chosen = uses_of(project, model, call, indices, depth)
            return [Use("select", model, call, indices, True),
                    *(u if u.selected_by is not None else dataclasses.replace(u, selected_by=call)
                      for u in chosen if u.kind in _SELECTABLE)]
        role = _dma_semaphore_role(func.name, call, arg, keyword)
        if role is not None:
            starts = [call] if func.name in _DMA_STARTING else _starts(model, call)
            # A descriptor only waited on here (the split async copy's second kernel): no start checks its
            # semaphores, but `.at[]` with too many indices still fails where it is applied.
            return [Use(role, model, start, indices, True, descriptor=call) for start in starts] or [
                Use("copy", model, call, indices, True, role=role, descriptor=call)]
        return [Use("other", model, call, indices, True)]
    if isinstance(func, ClassValue):  # a descriptor class (paged attention's MultiPageAsyncCopyDescriptor)
        held = _field_uses(project, func, call, arg, keyword, indices, depth)
        if held is not None:  # a dataclass or NamedTuple field: `StreamSlots(hbm, bufs, sems)`, then `self.sems`
            return held
        init = next((n for n in func.node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        func = Func(func.model, init, Instance(func)) if init is not None else func
    target = unwrap_function(func)
    if target is None or depth >= _MAX_HELPER_DEPTH or isinstance(target.node, ast.Lambda):
        return [Use("other", model, call, indices, True)]
    param = _parameter_for(target, call, arg, keyword)
    if param is None:
        return [Use("other", model, call, indices, True)]
    if target.model.scopes.get(target.node) is None:
        return [Use("other", model, call, indices, True)]
    return parameter_uses(project, target, param, indices, depth + 1)


def parameter_uses(project: "Project", func: Func, param: ast.arg, indices: int | None = 0, depth: int = 0) -> list[Use]:
    """Where the value bound to `func`'s parameter `param` goes (see `uses_of`)."""
    uses = []
    for node in _loads(func.model, func.node, param.arg):
        found = func.model.lookup(node.id, func.model.scope_of(node), node.lineno)
        if found is not None and found.node is param:
            uses.extend(uses_of(project, func.model, node, indices, depth))
    return uses


def _self_attribute(model: "ModuleModel", node: ast.AST) -> tuple[ast.ClassDef, str] | None:
    """(class, name) where `node` is `self.name` in a method of a class, `self` the method's first parameter."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    method = model.enclosing_function(node)
    cls = model.parents.get(method)
    if not (isinstance(method, ast.FunctionDef) and isinstance(cls, ast.ClassDef) and method.args.args
            and method.args.args[0].arg == node.value.id):
        return None
    return cls, node.attr


def _attribute_loads(model: "ModuleModel", cls: ast.ClassDef, name: str) -> list[ast.Attribute] | None:
    """The reads of `self.name` in the methods of `cls`, where one statement stores it; None otherwise."""
    loads, stores = _self_attribute_accesses(cls, name)
    return sorted(loads, key=lambda n: (n.lineno, n.col_offset)) if stores == 1 else None


def _self_attribute_accesses(cls: ast.ClassDef, name: str) -> tuple[list[ast.Attribute], int]:
    """The reads of `self.name` in the methods of `cls` (in walk order), and how many statements store it."""
    loads, stores = [], 0
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef) or not method.args.args:
            continue
        me = method.args.args[0].arg
        for node in ast.walk(method):
            if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) \
                    and node.value.id == me:
                if isinstance(node.ctx, ast.Load):
                    loads.append(node)
                else:
                    stores += 1
    return loads, stores


def _field_uses(project, cls: ClassValue, call: ast.Call, arg: ast.AST, keyword: str | None, indices,
                depth) -> list[Use] | None:
    """Where a dataclass's (or NamedTuple's) constructor argument goes: the reads of its field as `self.<field>`
    in the class's methods, where no method stores it; None for another class, or an argument not matched."""
    fields = dataclass_fields(cls.node)
    if fields is None or any(n.name == "__init__" for n in cls.node.body if isinstance(n, ast.FunctionDef)) \
            or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    names = [f.target.id for f in fields]
    name = keyword if keyword is not None else (names[call.args.index(arg)] if call.args.index(arg) < len(names) else None)
    if name not in names or depth >= _MAX_HELPER_DEPTH:
        return None
    loads, stores = _self_attribute_accesses(cls.node, name)
    if stores or not loads:
        return None
    return [use for load in loads for use in uses_of(project, cls.model, load, indices, depth + 1)]


def _dma_semaphore_role(api: str, call: ast.Call, arg: ast.AST, keyword: str | None) -> str | None:
    """"dma_src" / "dma_dst" when `arg` is the source (send) or destination (receive) semaphore of a TPU copy."""
    roles = _DMA_SEMAPHORES.get(api)
    if roles is None:
        return None
    if keyword is not None:
        return roles.get(keyword)
    index = call.args.index(arg) if arg in call.args else -1
    return roles.get(index)


def _starts(model: "ModuleModel", descriptor: ast.Call, methods: tuple[str, ...] = ("start",),
            depth: int = 0) -> list[ast.Call]:
    """The `.start()` calls (or other `methods`) of a copy descriptor: chained on it, on the one name it is
    assigned to, or on the calls of the local function returning it (`page_copy(p).start()`). JAX checks the
    semaphores there (dma_start's abstract evaluation)."""
    def start_of(node: ast.AST) -> ast.Call | None:
        attribute = model.parents.get(node)
        call = model.parents.get(attribute)
        if isinstance(attribute, ast.Attribute) and attribute.attr in methods and isinstance(call, ast.Call) \
                and call.func is attribute:
            return call
        return None

    chained = start_of(descriptor)
    if chained is not None:
        return [chained]
    parent = model.parents.get(descriptor)
    if isinstance(parent, ast.Return) and depth < 2:  # `def page_copy(p): return make_async_copy(...)`
        return [start for call in _calls_of_own_function(model, parent) for start in _starts(model, call, methods, depth + 1)]
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return [start for element in _list_elements(model, descriptor) if (start := start_of(element)) is not None]
    name = parent.targets[0].id
    scope = model.enclosing_function(parent) or model.tree
    starts = []
    for node in _loads(model, scope, name):
        binding = model.lookup(name, model.scope_of(node), node.lineno)
        if binding is not None and binding.node is parent and (start := start_of(node)) is not None:
            starts.append(start)
    return starts


def _calls_of_own_function(model: "ModuleModel", statement: ast.Return) -> list[ast.Call]:
    """The calls, by its name in the scope that defines it, of the function whose `return` this is."""
    function = model.enclosing_function(statement)
    if not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return []
    if isinstance(model.parents.get(function), ast.ClassDef):  # `stream.copy(...)`: a method no other def names
        return _method_calls(model, function)
    scope = model.enclosing_function(function) or model.tree
    calls = []
    for node in _loads(model, scope, function.name):
        call = model.parents.get(node)
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if isinstance(call, ast.Call) and call.func is node and binding is not None and binding.node is function:
            calls.append(call)
    return calls


def _method_calls(model: "ModuleModel", method: ast.FunctionDef) -> list[ast.Call]:
    """`x.name(...)` calls of a method whose name no other function of the module has, passing as many
    positional arguments as it takes after `self`."""
    named = [n for n in ast.walk(model.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method.name]
    taken = len(method.args.posonlyargs) + len(method.args.args) - 1
    if named != [method] or method.args.vararg is not None:
        return []
    return [call for call in model.calls_named(method.name) if isinstance(call.func, ast.Attribute)
            and len(call.args) == taken and not any(isinstance(a, ast.Starred) for a in call.args)]


def _list_elements(model: "ModuleModel", descriptor: ast.Call) -> list[ast.AST]:
    """Where a copy descriptor kept in a list is read back: `copies[0]`, and the loop variable of `for c in
    copies:`; the list one name holds, made by a display (`[copy_a, copy_b]`), a comprehension or `.append`."""
    parent = model.parents.get(descriptor)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "append" \
            and parent.args == [descriptor] and (owner := _self_attribute(model, parent.func.value)) is not None:
        # `self._copies.append(copy)`, then `for copy in self._copies: copy.start()` in another method
        loads = _attribute_loads(model, *owner) or []
        return [n for load in loads if isinstance(up := model.parents.get(load), ast.For) and up.iter is load
                and isinstance(up.target, ast.Name) for n in _loads(model, up, up.target.id)
                if getattr(model.lookup(n.id, model.scope_of(n), n.lineno), "node", None) is up]
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "append" \
            and isinstance(parent.func.value, ast.Name) and parent.args == [descriptor]:
        held = parent.func.value
        binding = model.lookup(held.id, model.scope_of(held), held.lineno)
    else:
        container = parent if isinstance(parent, (ast.List, ast.Tuple)) and descriptor in parent.elts or \
            isinstance(parent, ast.ListComp) and parent.elt is descriptor else None
        assign = model.parents.get(container) if container is not None else None
        if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
            return []
        held = assign.targets[0]
        binding = model.lookup(held.id, model.scope_of(held), held.lineno + 1)
        binding = binding if binding is not None and binding.node is assign else None
    if binding is None or binding.kind != "assign":
        return []
    scope = model.enclosing_function(parent) or model.tree
    elements = []
    for load in _loads(model, scope, held.id):
        if getattr(model.lookup(held.id, model.scope_of(load), load.lineno), "node", None) is not binding.node:
            continue
        up = model.parents.get(load)
        if isinstance(up, ast.Subscript) and up.value is load and isinstance(up.ctx, ast.Load):
            elements.append(up)
        elif isinstance(up, ast.For) and up.iter is load and isinstance(up.target, ast.Name):
            elements += [n for n in _loads(model, up, up.target.id)
                         if getattr(model.lookup(n.id, model.scope_of(n), n.lineno), "node", None) is up]
    return elements


def _parameter_for(func: Func, call: ast.Call, arg: ast.AST, keyword: str | None) -> ast.arg | None:
    spec = func.node.args
    positional = [*spec.posonlyargs, *spec.args]
    if func.self_value is not None and positional:
        positional = positional[1:]
    if keyword is not None:
        return next((p for p in [*positional, *spec.kwonlyargs] if p.arg == keyword), None)
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    index = call.args.index(arg)
    return positional[index] if index < len(positional) else None

