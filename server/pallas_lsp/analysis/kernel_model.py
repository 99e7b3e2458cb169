"""What JAX will do with each kernel entry point, computed once per entry: the model rules read.

For every entry point (see `kernels.py`): the backend that lowers it, its grid / cluster / thread
axes, the `get_global` calls it reaches (through helpers, `run_scoped`, `when`, `cond`, `fori_loop`,
Python loops, nested defs and other modules) with how each result is used, and the semaphore
allocations in the order JAX lowers them. Rules never walk syntax themselves.

Parts of it live beside it: `launches.py` (the calls that run a kernel), `result_uses.py` (how a
get_global result or semaphore is used), `reservations.py` (allocations in lowering order).
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from . import reads
from .allocations import Allocation, Allocations
from .arithmetic import product
from .call_of import call_of as _call_of, callee as _callee, callee_in_frame, table_callee  # noqa: F401
from .evaluate import as_memtype
from .jax_version import Version, format_version, jax_version
# Launches, a get_global result's uses and reservations are their own modules; rules and fixes also
# import those names from here, the model they read.
from .launches import Launch, _launch_wrappers, forwards_to_launch, kernel_launches  # noqa: F401
from .kernels import (EntryPoint, KernelIndex, get_global_argument, get_global_calls, pallas_calls,
                      reachable_functions, unwrap_function)
from .mosaic_gpu_limits import mosaic_gpu_limits
from .reservations import estimate, first_overflow, flatten_allocations  # noqa: F401
from .result_uses import (BARRIER_OPS, SEMAPHORE_OPS, Use, _DMA_SEMAPHORES, _DMA_STARTING,  # noqa: F401
                          _GENERIC_SEMAPHORE_OPS, _starts, launch_operand, loads_bound_by, parameter_uses, uses_of)
from .shared_memory import SharedMemory, shared_memory
from .values import Api, Const, Func, InterpretParams, KernelCall, MemType, Seq, Value

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project

# Backends, by what lowers the kernel.
MOSAIC_GPU = "mosaic_gpu"
MOSAIC_GPU_WARP = "mosaic_gpu_warp"  # inside pl.core_map(plgpu.WarpMesh(...))
TRITON = "triton"
TPU_TC = "tpu_tc"
SC_VECTOR = "sc_vector_subcore"
SC_SCALAR = "sc_scalar_subcore"
INTERPRET = "interpret"
UNKNOWN_BACKEND = "unknown"

# The release from which a GPU `pl.pallas_call` always lowers through Triton. Before it (read in the
# 0.10.2 and 0.11.1 sources, pallas_call.py `gpu_lowering`), a bare GPU pallas_call lowered through
# Mosaic GPU (`jax_pallas_use_mosaic_gpu`, env JAX_PALLAS_USE_MOSAIC_GPU, defaulted to True), as did
# `compiler_params=plgpu.CompilerParams()`; from 0.11.2 the flag is gone, a bare one is Triton and
# plgpu.CompilerParams fail with a bare AssertionError (pallas_call.py:925 in 0.11.2).
PALLAS_CALL_MOSAIC_GPU_UNTIL: Version = (0, 11, 2)

@dataclass(frozen=True)
class ScratchKeyword:
    """How a launch takes scratch buffers and semaphores. `keyword`: its parameter in jax 0.12's signature,
    what a fix writes and what an interpret=True launch allocates. `mosaic_gpu_lowers`: whether the launch
    compiled for Mosaic GPU lowers it too; where not, the advice is pl.run_scoped. Both checked by running
    JAX (tests/test_scratch_keywords.py)."""

    keyword: str
    mosaic_gpu_lowers: bool


SCRATCH_KEYWORDS: dict[str, ScratchKeyword] = {
    "plgpu.kernel": ScratchKeyword("scratch_types", True),
    "pl.kernel": ScratchKeyword("scratch_types", False),  # on a plgpu.Mesh: MOSAIC_GPU_SCRATCH_REFUSAL
    "pl.core_map": ScratchKeyword("scratch_shapes", False),  # likewise
    # jax 0.12 lowers a GPU pallas_call through Triton only; Mosaic GPU lowered it (scratch too) before 0.11.2.
    "pl.pallas_call": ScratchKeyword("scratch_shapes", True),
}
MOSAIC_GPU_SCRATCH_REFUSAL = "Scratch operands are not supported by the Mosaic GPU mpmd_map lowering"


_MESH_BACKENDS = {
    "plgpu.Mesh": MOSAIC_GPU,
    "plgpu.WarpMesh": MOSAIC_GPU_WARP,
    "pltpu.create_tensorcore_mesh": TPU_TC,
    "pltpu.TensorCoreMesh": TPU_TC,
    "pltpu.VectorSubcoreMesh": SC_VECTOR,
    "pltpu.ScalarSubcoreMesh": SC_SCALAR,
    "pl.tpu_sc.VectorSubcoreMesh": SC_VECTOR,
    "pl.tpu_sc.ScalarSubcoreMesh": SC_SCALAR,
}
# JAX's words where a backend has no lowering for get_global (jax 0.12.0.1; the same in 0.11.2): PAL003's error,
# and PAL001's where a non-semaphore type reaches such a backend.
GET_GLOBAL_NOT_LOWERED = {
    TRITON: "Unimplemented primitive in Pallas Triton lowering: get_global",
    TPU_TC: "Unimplemented primitive in Pallas TPU lowering for tc: get_global",
    SC_VECTOR: "Unimplemented primitive in Pallas TPU lowering for sc_vector_subcore: get_global",
    SC_SCALAR: "Unimplemented primitive in Pallas TPU lowering for sc_scalar_subcore: get_global",
    MOSAIC_GPU_WARP: "Unimplemented primitive in Pallas Mosaic GPU lowering: get_global for lowering semantics "
                     "LoweringSemantics.Warpgroup and user thread semantics PrimitiveSemantics.Warp",
}

_PARAMS_BACKENDS = {
    "pltpu.CompilerParams": TPU_TC,
    "pltriton.CompilerParams": TRITON,
    "plgpu.CompilerParams": MOSAIC_GPU,
}

SEMAPHORE_DTYPES = ("semaphore", "dma_sem", "barrier_semaphore")
# Entry points whose shared memory is estimated: what Mosaic GPU lowers through `lower_jaxpr_to_module`
# in jax 0.12 (a Mosaic GPU `pl.pallas_call`, before 0.11.2, also pipelines its blocks: not modelled).
ESTIMATED_APIS = ("plgpu.kernel", "pl.kernel", "pl.core_map")


@dataclass
class GetGlobalSite:
    model: "ModuleModel"
    call: ast.Call
    what: Value  # the evaluated argument (a MemType, OneOf, Api or UNKNOWN)
    uses: list[Use]

    @property
    def live(self) -> bool:
        """False only when the result certainly feeds nothing with an effect (pallas_call drops it)."""
        return any(use.live for use in self.uses)

    @property
    def memtype(self) -> MemType | None:
        value = as_memtype(self.what)
        return value if isinstance(value, MemType) else None


@dataclass(frozen=True)
class RunScopedSite:
    """A `pl.run_scoped` that allocates a Mosaic GPU semaphore, or names collective_axes: its call and those (None: not static)."""

    model: "ModuleModel"
    call: ast.Call
    collective_axes: tuple[str, ...] | None


@dataclass
class SemaphoreSite:
    """A semaphore ref the body holds other than a get_global result: a body parameter (scratch, operand,
    output) or a `pl.run_scoped` one, with its shape and how it is used. `origin`: "scratch_types[0]",
    "operand 0", "pl.run_scoped"; `node` the parameter."""

    model: "ModuleModel"
    node: ast.arg
    shape: tuple[int, ...]
    dtype: str
    origin: str
    uses: list[Use]
    space: str | None = None  # JAX's memory space: "semaphore_mem" for a TPU semaphore, "gmem" for a Mosaic GPU one
    allocated_at: tuple["ModuleModel", ast.AST] | None = None  # a `pl.run_scoped` one's call (or decorator)

    @property
    def tpu(self) -> bool:
        return self.space == "semaphore_mem"


@dataclass(frozen=True)
class DmaCopy:
    """A TPU copy a kernel reaches (`pltpu.make_async_copy(...)`, ...): the `.start()` calls where JAX checks
    its semaphores, and each semaphore argument as (role, node, not_ref): role "dma_src" (send) or
    "dma_dst" (receive); not_ref ("number", expr) for a number, ("loaded", expr) for a value read out of
    a semaphore ref (`sems[0]`), expr being that expression (the argument, or what a name holds), or
    None (a ref, or not known). `waits`: its `.wait()` calls, where JAX checks the receive semaphore of a
    copy no `.start()` here started (the split async copy's second kernel)."""

    model: "ModuleModel"
    call: ast.Call
    starts: tuple[ast.Call, ...]
    semaphores: tuple[tuple[str, ast.expr, tuple[str, ast.expr] | None], ...]
    waits: tuple[ast.Call, ...] = ()


@dataclass(frozen=True)
class SemaphoreOp:
    """A semaphore primitive a kernel reaches (`pl.semaphore_wait(...)`, ...): `kind` is signal, wait, read or
    barrier_semaphore (`pltpu.get_barrier_semaphore()`). `not_ref` for a signal or wait given no ref: ("number",
    expr) or ("loaded", expr), a value read out of a semaphore ref (`sem[...]`, `sems[0]`); None otherwise."""

    kind: str
    model: "ModuleModel"
    call: ast.Call
    not_ref: tuple[str, ast.expr] | None = None
    not_ref_model: "ModuleModel | None" = None  # where not_ref's expression is (a caller's, for a value handed on)

    @property
    def node(self) -> ast.Call:
        """Where JAX fails on it, as for a `Use`."""
        return self.call


@dataclass
class KernelModel:
    entry: EntryPoint
    backend: str
    backend_reason: str  # why, in words, for messages: "pl.pallas_call for a GPU lowers through Triton"
    grid_axes: tuple[str, ...] | None  # None: not known statically
    cluster_axes: tuple[str, ...] | None
    thread_axes: tuple[str, ...] | None
    get_globals: list[GetGlobalSite] = field(default_factory=list)
    allocations: tuple[Allocation, ...] = ()
    jax_version: Version | None = None
    certain_interpret: bool = False
    run_scoped: list["RunScopedSite"] = field(default_factory=list)
    semaphore_ops: list[SemaphoreOp] = field(default_factory=list)
    semaphores: list[SemaphoreSite] = field(default_factory=list)  # scratch / operand / run_scoped semaphores
    dma_copies: list[DmaCopy] = field(default_factory=list)
    # TPU: `pltpu.CompilerParams(collective_id=...)` (None: none or not static), and how many semaphores the
    # TPU interpreter allocates as the kernel starts (its semaphore-space operands and scratch; None: not static).
    collective_id: int | None = None
    start_semaphores: int | None = None
    interpreter: str | None = None  # which interpreter runs it: "tpu", "gpu" or "hlo" (interpret=True); None: compiled
    compiled_backend: str = UNKNOWN_BACKEND  # what would lower it if it were not interpreted (its launch's own checks)
    # Mosaic GPU: computes the shared memory on first use (PAL012, hover, code lens), not with every model.
    budget_of: "Callable[[], SharedMemory | None] | None" = field(default=None, repr=False, compare=False)

    @property
    def api(self) -> str:
        return self.entry.api

    @property
    def scratch_parameter(self) -> str | None:
        """Where scratch goes in advice for this launch run compiled: its `SCRATCH_KEYWORDS` keyword; None
        where the launch lowers none on its backend (pl.kernel and pl.core_map on a Mosaic GPU mesh:
        pl.run_scoped there) or is unknown."""
        found = SCRATCH_KEYWORDS.get(self.entry.api)
        backend = self.compiled_backend if self.backend == INTERPRET else self.backend  # "run it compiled" advice
        if found is None or (backend == MOSAIC_GPU and not found.mosaic_gpu_lowers):
            return None
        return found.keyword

    def scratch_advice(self) -> str:
        """Where this launch allocates a scratch buffer or semaphore, after "allocate it": "in scratch_types or
        with pl.run_scoped", or "with pl.run_scoped" where it takes no scratch."""
        return f"in {self.scratch_parameter} or with pl.run_scoped" if self.scratch_parameter else "with pl.run_scoped"

    @property
    def shared_memory(self) -> "SharedMemory | None":
        """Shared memory and TMEM as JAX's resource estimator computes them; None: not a kernel it
        estimates, or the analysed jax's allocation units could not be read."""
        if self.budget_of is None:
            return None
        # Kept in the module's memo, not on this object: computed later than the model (by a rule,
        # a hover), it may read what the model did not, and is forgotten with that (`reads`).
        memo, key = self.entry.model.eval_cache, ("shared-memory", id(self))
        found = memo.get(key)
        if found is None or found[0] is not self:
            found = reads.kept(memo, key, lambda: (self, self.budget_of()))
        return found[1]

    @property
    def drops_dead_code(self) -> bool:
        """pallas_call traces its body and removes dead equations; plgpu.kernel, pl.kernel, core_map do not."""
        return self.entry.api == "pl.pallas_call"

    def drops(self, uses: list[Use]) -> bool:
        """Does JAX drop a get_global with these uses before lowering or interpreting the kernel? A pallas_call
        removes dead equations when it traces its body (a read whose result feeds nothing too). JAX's GPU
        interpreter runs a kernel with a cluster through a CPU callback whose jaxpr is cleaned up the same way,
        except that a ref read keeps its ref (checked with jax 0.12: an unused or only `semaphore_read`
        get_global runs, one read with `ref[...]` fails)."""
        if self.drops_dead_code:
            return not any(use.live for use in uses)
        if self.interpreter == "gpu" and self.cluster_axes:
            return not any(use.live or use.kind == "ref_read" for use in uses)
        return False

    def reached(self, site: GetGlobalSite) -> bool:
        """Does this get_global survive into what the backend lowers (or the interpreter runs)?"""
        return not self.drops(site.uses)


# ---- building ------------------------------------------------------------------------------------


def kernel_models(project: "Project", model: "ModuleModel") -> list[KernelModel]:
    """Models of the entry points defined in `model` (cached with the module text)."""
    cached = model.eval_cache.get("kernel-models")
    if cached is None:
        with reads.frame():
            return _kernel_models(project, model)
    return cached


def _kernel_models(project: "Project", model: "ModuleModel") -> list[KernelModel]:
    cached = model.eval_cache.get("kernel-models")
    if cached is None:
        index = KernelIndex.of(project, model)
        warp_bodies = frozenset(id(e.body.node) for e in index.entries
                                if e.body is not None and _backend(project, e)[0] == MOSAIC_GPU_WARP)
        cached = [_entry_model(project, entry, warp_bodies) for entry in index.entries if entry.body is not None]
        model.eval_cache["kernel-models"] = cached
    return cached


def _entry_model(project: "Project", entry: EntryPoint, warp_bodies: frozenset) -> KernelModel:
    """One entry point's model, kept apart from the module's list with what it read: an edit inside one
    kernel's body builds that kernel again and keeps the others' (the index, and so the list, is found
    again in every analysis: `KernelIndex.of`). Kept only while the entry point is the same launch of
    the same kernel value with the same interpret marks (another module's index may add marks)."""
    if not reads.tracking():
        return _build(project, entry, warp_bodies)
    memo = entry.model.eval_cache
    key = ("kernel-model", id(entry.node), warp_bodies)
    marks = (entry.api, entry.kernel, tuple(entry.interpret), tuple(entry.maybe_interpret))
    found = memo.get(key)
    if found is not None and found[0][0] == marks[0] and found[0][1] is marks[1] and found[0][2:] == marks[2:]:
        found[1].entry = entry  # the same launch: rules name this analysis's entry point
        return found[1]
    return reads.kept(memo, key, lambda: (marks, _build(project, entry, warp_bodies)))[1]


def _note_walked(entry: EntryPoint, functions: list) -> None:
    """Note, besides what was asked of the evaluator, the code a kernel's model may have walked without
    asking: every function the body reaches (an edit inside one, nested functions included, forgets
    `("deep", id(function))`), the own statements of the functions that launch and define it, and the
    modules' top-level code."""
    for func in functions:
        reads.note(func.model.read_key)
        reads.note(("deep", id(func.node)))
    for model, node in ((entry.model, entry.node), (entry.body.model, entry.body.node)):
        reads.note(model.read_key)
        reads.note(("own", id(model.tree)))
        outer = model.enclosing_function(node)
        if outer is not None:  # its own statements (the kernels nested beside this one are theirs)
            reads.note(("own", id(outer)))


def models_reaching(project: "Project", model: "ModuleModel") -> list[tuple[KernelModel, GetGlobalSite]]:
    """(kernel, site) for every get_global of `model` reached by a kernel of this module or of a workspace
    module that imports it (those are only looked at when a get_global is not reached from here)."""
    calls = get_global_calls(project, model)
    if not calls:
        return []
    found = [(k, s) for k in kernel_models(project, model) for s in k.get_globals if s.model is model]
    reached = {id(s.call) for _, s in found}
    if any(id(c) not in reached for c in calls):
        for other in project.importers(model):
            found.extend((k, s) for k in kernel_models(project, other) for s in k.get_globals
                         if s.model is model and id(s.call) not in reached)
    return found


def _build(project: "Project", entry: EntryPoint, warp_bodies: set[int]) -> KernelModel:
    backend, reason = _backend(project, entry)
    grid, cluster, threads = _axes(project, entry)
    if grid is not None and entry.api in ("plgpu.kernel", "pl.pallas_call") and _vmapped(project, entry):
        # jax.vmap of a pallas_call (plgpu.kernel is one) adds a grid axis for the batch (its batching rule);
        # a pl.kernel's mesh is not batched that way (checked with jax 0.12: its get_globals stay block-local).
        grid = (*grid, "")
    body = entry.body
    exclude = warp_bodies - {id(body.node)}
    functions = reachable_functions(project, body, exclude=exclude)
    sites, scoped, ops, semaphores = [], [], [], []
    if body.model.mentions("emaphore") or entry.model.mentions("alloc_semaphore"):
        semaphores = _parameter_semaphores(project, entry)
    for func in functions:
        for api, kind in _GENERIC_SEMAPHORE_OPS.items():
            ops.extend(SemaphoreOp(kind, func.model, call) for call in _calls_in(project, func, api))
        for call in _calls_in(project, func, "pl.run_scoped"):
            found = _run_scoped_semaphore(project, func.model, call)
            if found is not None:
                scoped.append(found)
            # Any semaphore type (a TPU one too): signal and wait check every ref they are given.
            semaphores.extend(_run_scoped_semaphores(project, func.model, call))
        for decorator in getattr(func.node, "decorator_list", ()):  # @functools.partial(pl.run_scoped, sem=...)
            if _run_scoped_partial(project, func.model, decorator):
                semaphores.extend(_run_scoped_semaphores(project, func.model, decorator, func))
        for call in _calls_in(project, func, "pl.get_global"):
            argument = get_global_argument(call)
            what = project.evaluator.value(func.model, argument) if argument is not None else None
            sites.append(GetGlobalSite(func.model, call, what, uses_of(project, func.model, call)))
    # A copy in a helper (of this module or another) is the kernel's too: any function's module may name it.
    loaded = {id(use.node) for sem in semaphores for use in sem.uses if use.kind == "ref_read"}
    # A value read out of a semaphore and handed on (to a helper that signals it): the signal's argument is no ref.
    read_values = {id(value_use.node): (("loaded", use.node), use.model) for sem in semaphores for use in sem.uses
                   if use.kind == "ref_read" for value_use in uses_of(project, use.model, use.node)
                   if value_use.kind in ("signal", "wait", "read")}
    # Mosaic TPU lowers a semaphore_read of a value as a load from semaphore memory, which it refuses.
    checked = ("signal", "wait", "read") if reads_checked(backend, semaphores) else ("signal", "wait")
    ops = [_with_not_ref(project, op, {id(sem.node) for sem in semaphores}, loaded, read_values, checked)
           for op in ops]
    copies = _dma_copies(project, functions, {id(sem.node) for sem in semaphores}, loaded) \
        if any(func.model.mentions("async") for func in functions) else []
    allocations = tuple(Allocations(project, exclude).function(body, ()))
    collective_id, start_semaphores = _collective(project, entry)
    _note_walked(entry, functions)
    budget = None
    if backend == MOSAIC_GPU and entry.api in ESTIMATED_APIS:
        def budget():
            _note_walked(entry, functions)
            return shared_memory(project, entry, mosaic_gpu_limits(project), exclude)
    return KernelModel(entry, backend, reason, grid, cluster, threads, sites, allocations, jax_version(project),
                       bool(entry.interpret), scoped, semaphore_ops=ops, semaphores=semaphores, dma_copies=copies,
                       collective_id=collective_id, start_semaphores=start_semaphores,
                       interpreter=_interpreter(project, entry), budget_of=budget,
                       compiled_backend=_backend(project, entry, interpreted=False)[0] if entry.interpret else backend)


def _calls_in(project: "Project", func, api: str) -> list[ast.Call]:
    """The calls of `api` whose own function is `func` (not one nested in it), grouped once a module:
    every entry point's model asks, and a module of 1,000 kernels has as many functions to ask about."""
    key = ("calls-by-function", api)
    by_function = func.model.eval_cache.get(key)
    if by_function is None:  # read from `pallas_calls` only (a call's function changes with its calls)
        by_function = reads.kept(func.model.eval_cache, key, lambda: _by_function(project, func.model, api))
    return by_function.get(func.node, [])


def _by_function(project: "Project", model: "ModuleModel", api: str) -> dict:
    by_function: dict = {}
    for call in pallas_calls(project, model, api):
        by_function.setdefault(model.enclosing_function(call), []).append(call)
    return by_function


def _vmapped(project: "Project", entry: EntryPoint) -> bool:
    """Is the kernel run under `jax.vmap` in its module: the built kernel, or a function launching it, vmapped."""
    model = entry.model
    if not model.mentions("vmap"):
        return False
    for call in model.calls_named("vmap"):
        callee = project.evaluator.value(model, call.func)
        if not (isinstance(callee, Api) and callee.name == "jax.vmap" and call.args):
            continue
        target = project.evaluator.value(model, call.args[0])
        if isinstance(target, KernelCall) and target.node is entry.kernel.node:
            return True
        if isinstance(target, Func) and any(d is entry.kernel.node for d in getattr(target.node, "decorator_list", ())):
            return True  # the decorated body itself: `@functools.partial(plgpu.kernel, ...)` makes it the kernel
        if isinstance(target, Func) and any(launch.kernel.node is entry.kernel.node and _inside(target.model, launch.call, target.node)
                                            for launch in kernel_launches(project, target.model)):
            return True
    return False


def _inside(model: "ModuleModel", node: ast.AST, container: ast.AST) -> bool:
    while node is not None:
        if node is container:
            return True
        node = model.parents.get(node)
    return False


def _collective(project: "Project", entry: EntryPoint) -> tuple[int | None, int | None]:
    """(collective_id, semaphores allocated at the kernel's start) of a TPU kernel; (None, None) without one."""
    from .kernel_args import kernel_parameters

    if not entry.model.mentions("collective_id"):
        return None, None
    name, call, model = _callee(project, entry.model, _kwarg_node(entry.kernel, "compiler_params"))
    node = next((k.value for k in call.keywords if k.arg == "collective_id"), None) if call is not None else None
    value = project.evaluator.value(model, node) if name == "pltpu.CompilerParams" and node is not None else None
    if not (isinstance(value, Const) and type(value.value) is int):
        return None, None
    params = kernel_parameters(project, entry)
    spaces = [p for p in params if p.space == "semaphore_mem"]
    spec = entry.body.node.args
    placed = {id(p.node) for p in params}  # every parameter's role known: no semaphore among the unplaced
    known = spec.vararg is None and spec.kwarg is None and \
        all(id(a) in placed for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]) and \
        all(p.shape is not None for p in spaces)
    counts = [product(p.shape) for p in spaces] if known else [None]
    count = None if None in counts else sum(counts)
    return value.value, count


def _dma_copies(project: "Project", functions: list[Func], semaphore_params: set[int],
                loaded: set[int]) -> list[DmaCopy]:
    copies = []
    for func in functions:
        for api, roles in _DMA_SEMAPHORES.items():
            for call in pallas_calls(project, func.model, api):
                if func.model.enclosing_function(call) is not func.node:
                    continue
                arguments = [(roles[i], a) for i, a in enumerate(call.args) if i in roles]
                arguments += [(roles[k.arg], k.value) for k in call.keywords if k.arg in roles]
                semaphores = tuple((role, node, _not_a_ref(project, func.model, node, semaphore_params, loaded,
                                                           selects=True))
                                   for role, node in arguments)
                starts = (call,) if api in _DMA_STARTING else tuple(_starts(func.model, call))
                waits = () if starts else tuple(_starts(func.model, call, ("wait", "wait_recv", "wait_write")))
                copies.append(DmaCopy(func.model, call, starts, semaphores, waits))
    return copies


def _not_a_ref(project: "Project", model: "ModuleModel", node: ast.expr, semaphore_params: set[int],
               loaded: set[int] = frozenset(), depth: int = 0, selects: bool = False) -> tuple[str, ast.expr] | None:
    """("number", expr) or ("loaded", expr) (`sems[0]`, `sems.at[1][...]` of a body's semaphore parameter,
    or a read, among `loaded` (ids), of a semaphore the body passed to a helper) where a copy's semaphore
    argument is certainly no ref; None where it is one or is not known. With `selects` (a copy's argument, the
    only one `pl.select_ref` may choose), a value among the refs of `pl.select_ref(i, sems[0], sems.at[1])`."""
    value = project.evaluator.value(model, node)
    if isinstance(value, Const) and type(value.value) in (int, float):
        return "number", node
    if id(node) in loaded:
        return "loaded", node
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not _is_at(node.value):
        base = node.value
        while isinstance(base, ast.Subscript) and _is_at(base.value):
            base = base.value.value
        if isinstance(base, ast.Name):
            binding = model.lookup(base.id, model.scope_of(base), base.lineno)
            if binding is not None and binding.kind == "param" and id(binding.node) in semaphore_params:
                return "loaded", node
        return None
    if selects and isinstance(node, ast.Call) and depth < 4 and node.args \
            and _api_name(project, model, node.func) == "pl.select_ref":  # a value among the refs it chooses from
        return next((found for ref in node.args[1:] if not isinstance(ref, ast.Starred) and
                     (found := _not_a_ref(project, model, ref, semaphore_params, loaded, depth + 1)) is not None
                     and found[0] == "loaded"), None)
    if isinstance(node, ast.Name) and depth < 4:
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if binding is not None and binding.kind == "assign" and isinstance(binding.node, ast.Assign) \
                and len(binding.node.targets) == 1 and isinstance(binding.node.targets[0], ast.Name) \
                and binding.value is not None:
            return _not_a_ref(project, model, binding.value, semaphore_params, loaded, depth + 1, selects)
    return None


def reads_checked(backend: str, semaphores: list[SemaphoreSite]) -> bool:
    """Does Mosaic TPU lower the kernel's `pl.semaphore_read`s (checking the ref's shape, loading a value read out of
    one from semaphore memory): a TPU kernel, or one holding TPU semaphores, not certainly interpreted."""
    return backend != INTERPRET and (backend == TPU_TC or any(sem.tpu for sem in semaphores))


def _api_name(project: "Project", model: "ModuleModel", node: ast.expr) -> str | None:
    value = project.evaluator.value(model, node)
    return value.name if isinstance(value, Api) else None


def _with_not_ref(project: "Project", op: SemaphoreOp, semaphore_params: set[int], loaded: set[int],
                  read_values: dict[int, tuple[tuple[str, ast.expr], "ModuleModel"]],
                  checked: tuple[str, ...] = ("signal", "wait")) -> SemaphoreOp:
    """The op with what its semaphore argument is where that is certainly no ref, for the `checked` kinds (signal
    and wait; a read of a value too where Mosaic TPU lowers it); `read_values`: the ops (ids) a value read out of
    a semaphore reaches, with that read."""
    if op.kind not in ("signal", "wait", "read"):
        return op
    selection = _selection(project, op.model, _semaphore_argument(op.call))
    if selection is not None:  # only a TPU copy takes one: these fail on it while tracing, on every backend
        return dataclasses.replace(op, not_ref=("selected", selection), not_ref_model=op.model)
    if op.kind not in checked:
        return op
    if id(op.call) in read_values:
        not_ref, model = read_values[id(op.call)]
        return dataclasses.replace(op, not_ref=not_ref, not_ref_model=model)
    argument = _semaphore_argument(op.call)
    if argument is None:
        return op
    found = _not_a_ref(project, op.model, argument, semaphore_params, loaded)
    if found is not None and op.kind == "read" and found[0] != "loaded":
        return op  # a number read: not what Mosaic TPU was seen to refuse
    return dataclasses.replace(op, not_ref=found, not_ref_model=op.model) if found is not None else op


def _semaphore_argument(call: ast.Call) -> ast.expr | None:
    return call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else next(
        (k.value for k in call.keywords if k.arg == "sem_or_view"), None)


def _selection(project: "Project", model: "ModuleModel", node: ast.expr | None, depth: int = 0) -> ast.Call | None:
    """The `pl.select_ref(...)` call `node` is, directly or through a name bound to it once (checked with jax
    0.12: signal, wait and read given one fail while tracing, `Triggering __jax_array__() during abstractification
    is no longer supported`, on Mosaic TPU, Mosaic GPU and the interpreter alike)."""
    if isinstance(node, ast.Call) and _api_name(project, model, node.func) == "pl.select_ref":
        return node
    if isinstance(node, ast.Name) and depth < 4:
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if binding is not None and binding.kind == "assign" and isinstance(binding.node, ast.Assign) \
                and len(binding.node.targets) == 1 and isinstance(binding.node.targets[0], ast.Name):
            return _selection(project, model, binding.value, depth + 1)
    return None


def _is_at(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "at"


def _parameter_semaphores(project: "Project", entry: EntryPoint) -> list[SemaphoreSite]:
    """Body parameters JAX passes a semaphore ref of known shape: scratch, operands, outputs."""
    from .kernel_args import kernel_parameters

    body = entry.body
    return [SemaphoreSite(body.model, param.node, param.shape, param.dtype, param.origin,
                          parameter_uses(project, body, param.node), param.space)
            for param in kernel_parameters(project, entry)
            if param.dtype in SEMAPHORE_DTYPES and param.shape is not None]


def _run_scoped_partial(project: "Project", model: "ModuleModel", decorator: ast.expr) -> bool:
    """`functools.partial(pl.run_scoped, *types, **types)`: the def it decorates runs at once with that scratch."""
    if not (isinstance(decorator, ast.Call) and decorator.args):
        return False
    partial, first = project.evaluator.value(model, decorator.func), project.evaluator.value(model, decorator.args[0])
    return (isinstance(partial, Api) and partial.name == "functools.partial" and isinstance(first, Api)
            and first.name == "pl.run_scoped")


def _run_scoped_semaphores(project: "Project", model: "ModuleModel", call: ast.Call, body=None) -> list[SemaphoreSite]:
    """The semaphore parameters of a `pl.run_scoped(body, *types, **types)` body (or of the `body` def decorated
    with `call`, a `functools.partial(pl.run_scoped, *types, **types)`), with their uses."""
    if body is None:
        body = unwrap_function(project.evaluator.value(model, call.args[0])) if call.args else None
    if body is None or isinstance(body.node, ast.Lambda) or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    spec = body.node.args
    pairs = list(zip([*spec.posonlyargs, *spec.args], call.args[1:]))
    named = {p.arg: p for p in [*spec.args, *spec.kwonlyargs]}
    pairs += [(named[k.arg], k.value) for k in call.keywords if k.arg in named]
    found = []
    for param, type_node in pairs:
        memtype = as_memtype(project.evaluator.value(model, type_node))
        if isinstance(memtype, MemType) and memtype.dtype in SEMAPHORE_DTYPES and memtype.shape is not None:
            found.append(SemaphoreSite(body.model, param, memtype.shape, memtype.dtype, "pl.run_scoped",
                                       parameter_uses(project, body, param), memtype.space, (model, call)))
    return found


def _interpreter(project: "Project", entry: EntryPoint) -> str | None:
    """Which interpreter certainly runs the kernel: "tpu" (pltpu.InterpretParams, the TPU interpret-mode
    switches), "gpu" (plgpu.InterpretGPUParams, the GPU switches), "hlo" (`interpret=True`); None if none does."""
    found = {site_interpreter(project, entry, site) for site in entry.interpret}
    return found.pop() if len(found) == 1 else None


def site_interpreter(project: "Project", entry: EntryPoint, site) -> str:
    """The interpreter one interpret-mode site of `entry` selects: "tpu", "gpu" or "hlo"."""
    node = site.node.value if isinstance(site.node, ast.keyword) else site.node
    value = project.evaluator.value(site.model, node)
    if node is entry.node:  # an `interpret=` keyword without a node of its own (a decorator's partial)
        keyword = entry.kernel.kwarg("interpret")
        value = keyword[0] if keyword else value
    switch = project.evaluator.value(site.model, node.func) if isinstance(node, ast.Call) else None
    if isinstance(value, InterpretParams):
        return "tpu" if value.name.startswith("pltpu.") else "gpu"
    if isinstance(switch, Api) and switch.name.endswith("_interpret_mode"):
        return "tpu" if "_tpu_" in switch.name else "gpu"
    return "hlo"


def _run_scoped_semaphore(project: "Project", model: "ModuleModel", call: ast.Call) -> RunScopedSite | None:
    value = project.evaluator.value(model, call.func)
    if not (isinstance(value, Api) and value.name == "pl.run_scoped"):
        return None
    types = [a for a in call.args[1:] if not isinstance(a, ast.Starred)]
    types += [k.value for k in call.keywords if k.arg not in (None, "collective_axes")]
    semaphores = [t for t in types if isinstance(m := as_memtype(project.evaluator.value(model, t)), MemType)
                  and m.space == "gmem" and m.dtype in ("semaphore", "barrier_semaphore")]
    if not semaphores and not any(k.arg == "collective_axes" for k in call.keywords):
        return None
    axes_node = next((k.value for k in call.keywords if k.arg == "collective_axes"), None)
    axes = () if axes_node is None else _names(project.evaluator.value(model, axes_node))
    return RunScopedSite(model, call, axes)


def _kwarg_node(kernel: KernelCall, name: str) -> ast.AST | None:
    found = kernel.kwarg(name)
    return found[1] if found else None


def _mesh_node(entry: EntryPoint) -> ast.AST | None:
    """The mesh of a `pl.kernel(..., mesh=...)` or `pl.core_map(mesh)` (decorating the body, or called on it:
    `pl.core_map(self.mesh)(per_warp)`, whose entry node is the outer call)."""
    node = _kwarg_node(entry.kernel, "mesh")
    made = entry.kernel.node
    if node is None and entry.api == "pl.core_map" and isinstance(made, ast.Call) and made.args:
        node = made.args[0]
    return node


def compiled_backend(project: "Project", entry: EntryPoint) -> str:
    """What the launch lowers through when it runs compiled (TRITON for a bare pl.pallas_call on a GPU)."""
    return _backend(project, entry, interpreted=False)[0]


def _backend(project: "Project", entry: EntryPoint, interpreted: bool = True) -> tuple[str, str]:
    kernel = entry.kernel
    if entry.interpret and interpreted:
        return INTERPRET, "the kernel runs in interpret mode"
    if entry.api == "plgpu.kernel":
        return MOSAIC_GPU, "plgpu.kernel lowers through Mosaic GPU"
    if entry.api == "plgpu.warp_map":
        return MOSAIC_GPU_WARP, "plgpu.warp_map runs its function at warp level"
    if entry.api in ("pl.kernel", "pl.core_map"):
        name, _, _ = _callee(project, entry.model, _mesh_node(entry))
        if name in _MESH_BACKENDS:
            return _MESH_BACKENDS[name], f"{entry.api} with a {name} mesh"
        return UNKNOWN_BACKEND, f"{entry.api} with a mesh not known statically"
    # pl.pallas_call: the compiler params pick the backend, else the platform it is lowered for.
    params = _kwarg_node(kernel, "compiler_params")
    if params is not None:
        name = _callee(project, entry.model, params)[0] or table_callee(project, entry.model, params)
        if name == "plgpu.CompilerParams":
            version = jax_version(project)
            if version is None or version >= PALLAS_CALL_MOSAIC_GPU_UNTIL:
                return UNKNOWN_BACKEND, "pl.pallas_call with plgpu.CompilerParams no longer lowers (jax 0.11.2+)"
            return MOSAIC_GPU, "pl.pallas_call with plgpu.CompilerParams lowers through Mosaic GPU (before jax 0.11.2)"
        if name in _PARAMS_BACKENDS:
            backend = _PARAMS_BACKENDS[name]
            return backend, f"pl.pallas_call with {name}"
        if not (isinstance(params, ast.Constant) and params.value is None):
            return UNKNOWN_BACKEND, "pl.pallas_call with compiler params not known statically"
    if getattr(project, "platform", "gpu") == "tpu":
        return TPU_TC, "pl.pallas_call lowered for a TPU (setting platform = \"tpu\")"
    tpu_only = _tpu_only_api(project, entry)
    if tpu_only is not None:
        return TPU_TC, f"pl.pallas_call of a kernel that uses {tpu_only} lowers for a TPU"
    if any(site_interpreter(project, entry, site) == "tpu" for site in (*entry.interpret, *entry.maybe_interpret)) \
            or _tpu_interpreter_module(project, entry):
        return TPU_TC, ("pl.pallas_call of a module that runs its kernels under the TPU interpreter "
                        "(pltpu.force_tpu_interpret_mode) lowers for a TPU")
    version = jax_version(project)
    if version is not None and version < PALLAS_CALL_MOSAIC_GPU_UNTIL:
        return MOSAIC_GPU, (f"pl.pallas_call lowered for a GPU uses Mosaic GPU in jax {format_version(version)} "
                            "(setting platform = \"gpu\")")
    return TRITON, "pl.pallas_call lowered for a GPU uses Triton (setting platform = \"gpu\")"


# Operations only one platform lowers, and what a kernel body does with them.
_TPU_OPERATIONS = ("pltpu.make_async_copy", "pltpu.make_async_remote_copy", "pltpu.async_copy", "pltpu.sync_copy",
                   "pltpu.get_barrier_semaphore")
_GPU_OPERATIONS = ("plgpu.barrier_arrive", "plgpu.barrier_wait", "plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem",
                   "plgpu.commit_smem", "plgpu.wait_smem_to_gmem", "plgpu.wgmma", "plgpu.tcgen05_mma")
# A semaphore type of either module says nothing of the platform (pltpu.SemaphoreType.REGULAR is written in GPU
# kernels too, PAL001 says what to use there); a DMA semaphore is TPU's own.
_EITHER_PLATFORM = ("pltpu.SemaphoreType.REGULAR", "pltpu.SemaphoreType.BARRIER")


def _tpu_only_api(project: "Project", entry: EntryPoint) -> str | None:
    """A TPU-only API a bare `pl.pallas_call` is written with, where the project platform is not set to TPU:
    a `pltpu` grid spec (`pltpu.PrefetchScalarGridSpec`), a `pltpu` memory type or DMA semaphore given to
    `pl.get_global` (`pltpu.VMEM` from a helper shared with a GPU path), a TPU copy. None when there is none,
    or when the kernel also uses a `plgpu` type or operation; where its launch's module imports Mosaic GPU (written
    for a GPU too: a TPU type may be the mistake), only a TPU copy or grid spec counts (a GPU path beside a TPU one
    sharing a helper: the pallas_call that copies with pltpu.make_async_copy is the TPU one)."""
    key = ("tpu-only-api", id(entry.node), id(entry.body.node) if entry.body is not None else None)  # a launch per body
    cache = entry.model.eval_cache
    if key not in cache:
        cache[key] = _find_tpu_only_api(project, entry)
    return cache[key]


def _tpu_interpreter_module(project: "Project", entry: EntryPoint) -> bool:
    """The launch's module, which does not import Mosaic GPU, switches on the TPU interpreter somewhere
    (`pltpu.force_tpu_interpret_mode()` chosen by a helper, `pltpu.set_tpu_interpret_mode`): its kernels are
    TPU kernels, compiled on a TPU."""
    model = entry.model
    if _imports_mosaic_gpu(model) or "_tpu_interpret_mode" not in model.text:
        return False
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and "_tpu_interpret_mode" in node.func.attr:
            callee = project.evaluator.value(model, node.func)
            if isinstance(callee, Api) and callee.name in ("pltpu.force_tpu_interpret_mode", "pltpu.set_tpu_interpret_mode"):
                return True
    return False


def _imports_mosaic_gpu(model: "ModuleModel") -> bool:
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) and (
        "mosaic_gpu" in (getattr(node, "module", None) or "") or any("mosaic_gpu" in a.name for a in node.names))
        for node in model.tree.body)


def _find_tpu_only_api(project: "Project", entry: EntryPoint) -> str | None:
    gpu_module = _imports_mosaic_gpu(entry.model)
    grid_spec = _kwarg_node(entry.kernel, "grid_spec")
    found: set[str] = set()
    if grid_spec is not None:
        found.add(_callee(project, entry.model, grid_spec)[0] or "")
    for func in reachable_functions(project, entry.body) if entry.body is not None else ():
        for call in _calls_in(project, func, "pl.get_global"):
            argument = get_global_argument(call)
            what = as_memtype(project.evaluator.value(func.model, argument)) if argument is not None else None
            name = what.constructor if isinstance(what, MemType) else what.name if isinstance(what, Api) else ""
            found.add(name or "")
        found.update(api for api in (*_TPU_OPERATIONS, *_GPU_OPERATIONS) if _calls_in(project, func, api))
    tpu = sorted(name for name in found if name.startswith("pltpu.") and name not in _EITHER_PLATFORM)
    if gpu_module:  # a module with a Mosaic GPU path too: a TPU copy or grid spec says TPU, a type alone does not
        tpu = [name for name in tpu if name in _TPU_OPERATIONS or name.endswith("GridSpec")]
    return tpu[0] if tpu and not any(name.startswith("plgpu.") for name in found) else None


def _names(value: Value) -> tuple[str, ...] | None:
    if isinstance(value, Const) and isinstance(value.value, str):
        return (value.value,)
    if isinstance(value, Const) and value.value is None:
        return ()
    if isinstance(value, Seq) and all(isinstance(i, Const) and isinstance(i.value, str) for i in value.items):
        return tuple(i.value for i in value.items)
    return None


def _extent(value: Value) -> int | None:
    """Number of axes of a grid/cluster value: `(2, 3)` -> 2, `4` -> 1, `()` -> 0; None when unknown."""
    if isinstance(value, Seq):
        return len(value.items)
    if isinstance(value, Const) and type(value.value) is int:
        return 1
    if isinstance(value, Const) and value.value is None:
        return 0
    return None


def _launch_settings(project: "Project", entry: EntryPoint):
    """`get(keyword)` for the grid, cluster and thread settings of a Mosaic GPU launch (the
    `plgpu.kernel` keywords or the `plgpu.Mesh` of a `pl.kernel`/`pl.core_map`); None where not static."""
    kernel, model = entry.kernel, entry.model
    if entry.api in ("pl.kernel", "pl.core_map"):
        name, call, mesh_model, frame = callee_in_frame(project, model, _mesh_node(entry))
        if call is None or name != "plgpu.Mesh":
            return None
        evaluate = project.evaluator.value
        kwargs = {k.arg: evaluate(mesh_model, k.value, frame) for k in call.keywords if k.arg}
        if any(k.arg is None for k in call.keywords) or call.args:
            return None
        return kwargs.get
    if entry.api == "plgpu.kernel":
        if any(key is None for key, _, _ in kernel.kwargs):
            return None
        values = {key: value for key, value, _ in kernel.kwargs}
        return values.get
    return None


def thread_count(project: "Project", entry: EntryPoint) -> int | None:
    """How many warpgroups a Mosaic GPU launch runs per block (`num_threads`; 1 without it); None: not written."""
    get = _launch_settings(project, entry)
    if get is None:
        return None
    threads = get("num_threads", Const(None))
    if not isinstance(threads, Const) or (threads.value is not None and type(threads.value) is not int):
        return None
    return threads.value or 1


def axis_sizes(project: "Project", entry: EntryPoint) -> dict[str, int]:
    """Named grid and cluster axes of a Mosaic GPU launch whose size is written: {name: size}."""
    get = _launch_settings(project, entry)
    if get is None:
        return {}
    sizes: dict[str, int] = {}
    for size_key, names_key in (("grid", "grid_names"), ("cluster", "cluster_names")):
        size, names = get(size_key, Seq(())), _names(get(names_key, Seq(())))
        items = size.items if isinstance(size, Seq) else (size,)
        if names is None or len(names) != len(items):
            continue
        for name, item in zip(names, items):
            if isinstance(item, Const) and type(item.value) is int:
                sizes[name] = item.value
    return sizes


def _axes(project: "Project", entry: EntryPoint) -> tuple:
    """(grid, cluster, thread) axis names; an axis without a name is "" ; None where not static."""
    get = _launch_settings(project, entry)
    if get is None:
        return None, None, None
    axes = []
    for size_key, names_key in (("grid", "grid_names"), ("cluster", "cluster_names")):
        size, names = get(size_key, Seq(())), get(names_key, Seq(()))
        count = _extent(size)
        named = _names(names)
        if count is None:
            axes.append(None)
        elif named is not None and len(named) == count:
            axes.append(named)
        else:
            axes.append(("",) * count)
    threads, thread_name = get("num_threads", Const(None)), get("thread_name", Const(None))
    if isinstance(thread_name, Const) and isinstance(thread_name.value, str):
        axes.append((thread_name.value,))
    elif isinstance(thread_name, Const) and thread_name.value is None and isinstance(threads, Const):
        axes.append(())
    else:
        axes.append(None)
    return tuple(axes)


# ---- how a get_global result is used --------------------------------------------------------------


# ---- semaphore allocations in lowering order --------------------------------------------------------


def budget_sites(project: "Project", model: "ModuleModel", wanted=None) -> list[tuple[ast.AST, KernelModel]]:
    """(node, kernel) for each launch in `model` of a kernel defined here whose shared memory is estimated,
    and the entry point itself of such a kernel launched nowhere in the module. Only modules that define
    a Mosaic GPU kernel `wanted(kernel)` picks are searched for launches (finding them evaluates every call)."""
    estimated = [k for k in kernel_models(project, model)
                 if k.shared_memory is not None and (wanted is None or wanted(k))]
    if not estimated:
        return []
    launches = kernel_launches(project, model)
    sites: list[tuple[ast.AST, KernelModel]] = []
    for kernel in estimated:
        runs = [launch.call for launch in launches if launch.kernel == kernel.entry.kernel]
        sites.extend((node, kernel) for node in runs or [kernel.entry.node])
    return sites
