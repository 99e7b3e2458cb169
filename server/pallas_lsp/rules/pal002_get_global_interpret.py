"""PAL002 get-global-interpret: `get_global` reached from a kernel that runs in interpret mode.

JAX has a clear message for this (`get_global discharge is not supported in interpret mode.`) but
never reaches it: users get `TypeError: No ir_type_handler for aval type ...` from deep inside the
HLO lowering, with no line of theirs. The diagnostic sits on the get_global call and points at
what makes the kernel interpreted: an error where that is certain (for at least one launch), a
warning where a run-time value decides (a conditional, the environment). A `pallas_call` drops a
get_global whose result feeds nothing (an unused `semaphore_read`, a helper ignoring it) first.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from ..analysis.kernel_model import kernel_models, uses_of
from ..analysis.interpret_errors import DMA_SEM_QUOTE, NO_IR_TYPE_QUOTE, chosen_interpreter, interpreted_quote
from ..analysis.kernels import KernelIndex, get_global_argument, get_global_calls, pallas_calls, reachable_functions
from ..analysis.values import Api, Const, Seq

CODE = "PAL002"
NAME = "get-global-interpret"
SEVERITY = "error"
SUMMARY = "pl.get_global cannot run in interpret mode."

SHORT_QUOTE = NO_IR_TYPE_QUOTE  # ...: jax._src.state.types.AbstractRef
# interpret=True (the HLO interpreter) adds to a DMA semaphore a copy starts before anything else fails (jax 0.12;
# the TPU interpreter says SHORT_QUOTE, and a copy only waited on does too).
DMA_STARTED_QUOTE = DMA_SEM_QUOTE
_WHY = ("get_global has no interpret-mode implementation (JAX's own message for this, \"get_global discharge is not "
        "supported in interpret mode\", is never reached)")


def message_of(kernel, certain: bool, quote: str = SHORT_QUOTE, buffer: bool = False) -> str:
    """JAX's words and what to do first; the scratch that applies to this launch (`kernel`: its model, or None).
    A buffer (`buffer`: no semaphore) is scratch whether the kernel is interpreted or compiled."""
    scratch = kernel.scratch_advice() if kernel is not None else "as scratch or with pl.run_scoped"
    if buffer:
        prefix = "JAX" if certain else "JAX, if interpreted"
        return (f'{prefix}: "{quote}"; allocate it as scratch. {_WHY}; no backend allocates a buffer with get_global '
                f"either: allocate it {scratch}")
    if certain:
        return (f'JAX: "{quote}"; run it compiled or use a scratch semaphore. {_WHY}; a semaphore only for '
                f"one block can be allocated {scratch} instead")
    return (f'JAX, if interpreted: "{quote}"; run it compiled. Whether it is interpreted is decided at run '
            f"time (see the related location), and {_WHY}; a semaphore only for one block can be allocated "
            f"{scratch} instead")


def _is_buffer(project, model, call) -> bool:
    """The get_global asks for a scratch buffer (SMEM, VMEM, TMEM), not a semaphore, barrier or global array."""
    from ..analysis.evaluate import as_memtype
    from ..analysis.kernels import get_global_argument
    from ..analysis.values import MemType

    argument = get_global_argument(call)
    value = as_memtype(project.evaluator.value(model, argument)) if argument is not None else None
    return (isinstance(value, MemType) and value.dtype not in ("semaphore", "barrier_semaphore", "dma_sem")
            and "Barrier" not in value.constructor and value.space not in ("gmem", "any", "hbm"))


def _quote(project, model, call, sites) -> str:
    """DMA_STARTED_QUOTE for a DMA semaphore a copy starts, where every site is `interpret=True` itself; else
    SHORT_QUOTE."""
    from ..analysis.evaluate import as_memtype
    from ..analysis.kernels import get_global_argument
    from ..analysis.values import MemType

    argument = get_global_argument(call)
    value = as_memtype(project.evaluator.value(model, argument)) if argument is not None else None
    if not (isinstance(value, MemType) and value.dtype == "dma_sem" and sites):
        return SHORT_QUOTE
    for site in sites:
        node = site.node.value if isinstance(site.node, ast.keyword) else site.node
        chosen = project.evaluator.value(site.model, node)
        if not (isinstance(chosen, Const) and chosen.value is True):
            return SHORT_QUOTE
    started = any(use.kind in ("dma_src", "dma_dst") for use in uses_of(project, model, call))
    return DMA_STARTED_QUOTE if started else SHORT_QUOTE


def _importers(project, model):
    """Workspace modules that may launch kernels reaching this one: they import it and mention interpret mode."""
    return [other for other in project.importers(model) if project.index.mentions_interpret(other.path)]


def check(ctx):
    rule = sys.modules[__name__]
    project, model = ctx.project, ctx.model
    targets = {id(call): call for call in get_global_calls(project, model)}
    if not targets:
        return
    # Build every index first: a module's `with force_*_interpret_mode()` marks kernels of other modules.
    indexes = [KernelIndex.of(project, source) for source in [model, *_importers(project, model)]]
    entries = [e for index in indexes for e in index.entries if e.body is not None]
    kernels = {id(k.entry): k for source in [model, *_importers(project, model)] for k in kernel_models(project, source)}
    reported: set[int] = set()
    # Certain interpret mode first (an error); then what only may run interpreted (a warning).
    for certain in (True, False):
        for entry in entries:
            with ctx.isolated(rule, entry.node, entry.model):
                sites = entry.interpret if certain else entry.maybe_interpret
                if not sites:
                    continue
                reachable = reachable_functions(project, entry.body)
                functions = {id(f.node) for f in reachable if f.model is model}
                earlier = _earlier_failure(ctx, entry, reachable) if certain else None
                for call_id, call in targets.items():
                    if call_id in reported or id(model.enclosing_function(call)) not in functions:
                        continue
                    kernel = kernels.get(id(entry))
                    if kernel is not None and kernel.drops(uses_of(project, model, call)):
                        continue  # dropped as dead code before it is interpreted (a pallas_call, a cluster on the GPU one)
                    reported.add(call_id)
                    verb = "runs" if certain else "may run"
                    related = [ctx.related(site.model, site.node, f"the kernel {verb} in interpret mode because of {site.reason}")
                               for site in sites]
                    related.append(ctx.related(entry.model, entry.node, f"kernel entry point ({entry.api})"))
                    argument = get_global_argument(call)
                    what = project.evaluator.value(model, argument) if argument is not None else None
                    quote = interpreted_quote(what, chosen_interpreter(project, entry))
                    if quote == DMA_STARTED_QUOTE and _quote(project, model, call, sites) != DMA_STARTED_QUOTE:
                        quote = SHORT_QUOTE  # a DMA semaphore no copy starts: the lowering meets the ref first
                    message = message_of(kernel, certain, quote, _is_buffer(project, model, call))
                    if earlier is not None:
                        message += f". {earlier[1]}"
                        related.append(ctx.related(earlier[0].model, earlier[0].node, "JAX fails here first, in interpret mode"))
                    yield ctx.finding(rule, call, message, tuple(related),
                                          facts={"get_global": call, "model": model, "entry": entry,
                                                 "interpret": list(sites), "certain": certain},
                                          severity=None if certain else "warning")


@dataclass(frozen=True)
class _Place:
    model: object
    node: ast.AST


def _earlier_failure(ctx, entry, functions):
    """Where an interpreted plgpu.kernel / pl.kernel fails before get_global (checked with jax 0.12):
    (place, sentence) or None. `lax.axis_index` of a grid axis under interpret=True (the HLO interpreter does
    not bind plgpu.kernel's grid names); a collective `pl.run_scoped` under either interpreter."""
    if entry.api not in ("plgpu.kernel", "pl.kernel"):
        return None
    found = entry.kernel.kwarg("interpret")
    value = found[0] if found else None
    hlo = isinstance(value, Const) and bool(value.value)
    evaluate = ctx.project.evaluator.value
    names = entry.kernel.kwarg("grid_names")
    grid_names = set()
    if names and isinstance(names[0], Seq):
        grid_names = {i.value for i in names[0].items if isinstance(i, Const)}
    elif names and isinstance(names[0], Const) and isinstance(names[0].value, str):
        grid_names = {names[0].value}
    for func in functions:
        model = func.model
        calls = [*model.calls_named("axis_index"), *pallas_calls(ctx.project, model, "pl.run_scoped")]
        for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
            if model.enclosing_function(call) is not func.node:
                continue
            callee = evaluate(model, call.func)
            if not isinstance(callee, Api):
                continue
            if callee.name in ("lax.axis_index", "jax.lax.axis_index") and hlo and call.args:
                axis = evaluate(model, call.args[0])
                if isinstance(axis, Const) and axis.value in grid_names:
                    return _Place(model, call), (
                        f"In this kernel JAX stops earlier, at lax.axis_index({axis.value!r}): NameError: Found an "
                        f"unbound axis name: {axis.value} (interpret=True does not bind plgpu.kernel grid names; "
                        "plgpu.InterpretGPUParams() does)")
            if callee.name == "pl.run_scoped" and any(k.arg == "collective_axes" for k in call.keywords):
                words = ("NotImplementedError: run_scoped interpret rule does not support collective axes" if hlo else
                         "ValueError: Collective axis ... not found among axes")
                return _Place(model, call), (f"In this kernel JAX stops earlier, at the collective pl.run_scoped: "
                                             f"{words}")
    return None

