"""PAL025 hlo-interpreter-mosaic-gpu: a Mosaic GPU kernel that `interpret=True` runs, using what only Mosaic GPU has.

`plgpu.kernel(..., interpret=True)` runs the body through Pallas's generic interpreter (the HLO one), which
discharges state primitives and lowers the rest for the CPU. Mosaic GPU's own operations have neither rule there
(jax 0.12, checked by running each form): a warp-specialized kernel (`num_threads=`, any value) stops first, at the
`run_scoped` it wraps the body in (`NotImplementedError: run_scoped interpret rule does not support collective
axes`); then the first TMA copy or barrier wait of the body (`No state discharge rule implemented for primitive:
copy_gmem_to_smem`, `copy_smem_to_gmem`, `barrier_wait`); then a `plgpu.Barrier` in `scratch_types`, used or not
(`NotImplementedError: barrier`); then `plgpu.commit_smem()` (`MLIR translation rule for primitive 'commit_smem' not
found for platform cpu`). JAX's GPU interpreter, `interpret=plgpu.InterpretGPUParams()`, runs all of them on a CPU.
Reported where JAX's traceback points: the operation, else the launch's `interpret=` (a warning where a run-time
value decides); the fix passes the GPU interpreter's parameters where the switch asks for interpret mode.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.kernels import reachable_functions
from ..analysis.kernel_model import INTERPRET, site_interpreter
from ..analysis.values import Api, Const, Func, MemType, Seq, Mapping

CODE = "PAL025"
NAME = "hlo-interpreter-mosaic-gpu"
SEVERITY = "error"
SUMMARY = ("A Mosaic GPU kernel run with interpret=True that uses warp specialization, TMA copies or barriers: only "
           "plgpu.InterpretGPUParams() runs them on a CPU.")

# JAX's words (NotImplementedError each), short enough that the advice fits an editor's Problems panel.
THREADS_QUOTE = "run_scoped interpret rule does not support collective axes"
# The body's Mosaic GPU operations the generic interpreter has no rule for, and JAX's words for each.
UNDISCHARGED = {f"plgpu.{name}": f"No state discharge rule implemented for primitive: {name}"
                for name in ("copy_gmem_to_smem", "copy_smem_to_gmem", "barrier_wait")}
LOWERED_ONLY = {"plgpu.commit_smem": "MLIR translation rule for primitive 'commit_smem' not found for platform cpu"}
BARRIER_QUOTE = "NotImplementedError: barrier"


def message(quote: str, what: str, certain: bool) -> str:
    head = f'JAX: "{quote}"' if certain else f'JAX, if interpret is True: "{quote}"'
    return (f"{head}; use plgpu.InterpretGPUParams(). interpret=True runs a Mosaic GPU kernel through "
            f"Pallas's generic interpreter, which has no rule for {what}; JAX's GPU interpreter runs it on a CPU.")


def check(ctx):
    rule = sys.modules[__name__]
    if not ctx.model.mentions("interpret") or not ctx.calls_any({"plgpu.kernel"}):
        return
    for kernel in ctx.kernels():
        entry = kernel.entry
        if entry.api != "plgpu.kernel" or entry.model is not ctx.model or not isinstance(entry.node, ast.Call):
            continue
        with ctx.isolated(rule, entry.node, entry.model):
            switch = hlo_switch(ctx.project, kernel)
            if switch is None:
                continue
            node, certain = switch
            failure = first_failure(ctx.project, kernel)
            if failure is None or ctx.reported_on(kernel, _traced_first()):
                continue  # JAX stops earlier, while tracing the body (a barrier wait on a semaphore: PAL006)
            quote, what, place = failure
            related = [ctx.related(entry.model, node, "interpret=True chooses the generic interpreter"),
                       ctx.entry_related(kernel)]
            at = place[1] if place is not None and place[0] is ctx.model else node  # where JAX's traceback points
            yield ctx.finding(rule, at, message(quote, what, certain), tuple(related),
                              facts={"kernel": kernel, "entry": entry, "switch": node, "certain": certain},
                              severity=None if certain else "warning")


def _traced_first():
    """The rules whose errors JAX raises while tracing the body, before the interpreter discharges anything."""
    from .pal016_gpu_interpreter_semaphore import TRACED_FIRST
    from . import pal006_global_semaphore_as_barrier

    return (*TRACED_FIRST, pal006_global_semaphore_as_barrier)


def hlo_switch(project, kernel) -> tuple[ast.keyword, bool] | None:
    """The launch's `interpret=` keyword where it selects the generic interpreter for a run (a site of the kernel's
    that `site_interpreter` calls "hlo"), and whether some launch certainly does; None where none does."""
    entry = kernel.entry
    keyword = next((k for k in entry.node.keywords if k.arg == "interpret"), None)
    if keyword is None:
        return None
    certain = [s for s in entry.interpret if site_interpreter(project, entry, s) == "hlo"]
    maybe = [s for s in entry.maybe_interpret if site_interpreter(project, entry, s) == "hlo"]
    if not (certain or maybe) or any(site_interpreter(project, entry, s) != "hlo"
                                     for s in (*entry.interpret, *entry.maybe_interpret)):
        return None  # another interpreter is chosen too (a force_gpu_interpret_mode around a test): not one switch
    return keyword, bool(certain) and kernel.backend == INTERPRET


def first_failure(project, kernel) -> tuple[str, str, tuple | None] | None:
    """(JAX's words, what has no rule, (model, node) where it stops or None) for the first thing of the kernel the
    generic interpreter cannot run, in the order JAX meets them; None where it runs all."""
    entry = kernel.entry
    threads = entry.kernel.kwarg("num_threads")
    if threads is not None and not (isinstance(threads[0], Const) and threads[0].value is None):
        return THREADS_QUOTE, "the warp specialization num_threads= asks for", None
    body = entry.body
    if body is None:
        return None
    operations = {**UNDISCHARGED, **LOWERED_ONLY}
    found = []
    for func in reachable_functions(project, Func(body.model, body.node)):
        for call in func.model.calls_named(*(name.split(".")[1] for name in operations)):
            if func.model.enclosing_function(call) is not func.node:
                continue
            callee = project.evaluator.value(func.model, call.func)
            if isinstance(callee, Api) and callee.name in operations:
                found.append((callee.name in LOWERED_ONLY, func.model, call, callee.name))
    barriers = _barrier_scratch(entry)
    if not barriers and any(not lowered and name != "plgpu.copy_smem_to_gmem" for lowered, _, _, name in found):
        # A copy into SMEM and a barrier wait take a barrier: where the kernel allocates none in its scratch (a
        # semaphore operand given as one), JAX stops while tracing (PAL006's words), not at the discharge.
        return None
    discharged = [f for f in found if not f[0]]
    if discharged:  # state discharge walks the body before anything is lowered
        _, model, call, name = discharged[0]
        return UNDISCHARGED[name], f"{name} (a Mosaic GPU operation)", (model, call)
    if barriers:
        return BARRIER_QUOTE, "a plgpu.Barrier in scratch_types", None
    if found:
        _, model, call, name = found[0]
        return LOWERED_ONLY[name], f"{name} (a Mosaic GPU operation)", (model, call)
    return None


def _barrier_scratch(entry) -> bool:
    scratch = entry.kernel.kwarg("scratch_types")
    if scratch is None:
        return False
    value = scratch[0]
    items = value.items if isinstance(value, Seq) else [v for _, v in value.items] if isinstance(value, Mapping) \
        else [value]
    return any(isinstance(item, MemType) and "Barrier" in item.constructor for item in items)
