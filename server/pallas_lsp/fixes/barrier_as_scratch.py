"""Fix (PAL006): a global semaphore used only as a barrier becomes an SMEM `plgpu.Barrier()` scratch.

Barrier operations (`plgpu.barrier_arrive`, `plgpu.barrier_wait`, a copy's `barrier=`) act within
a block, which is what the kernel asked for by calling them; a `plgpu.Barrier()` in
`scratch_types` is that block's barrier; a compiled `pl.kernel`, which takes no scratch, gets it from `pl.run_scoped` for the rest
of the function instead (run_scoped_allocation). Its arrivals: one per warpgroup that runs an arrival
(`num_arrivals=num_threads` where every warpgroup does; one where only the branch `pl.when(axis_index(wg) == k)`
does: barrier_arrivals, no fix where not provable); a semaphore array indexed
in full at every use becomes a barrier array of its shape (`num_barriers=`), the `.at[]` views kept.
A compiled Triton `pl.pallas_call`, which has no barrier and no scratch, is made a `plgpu.kernel` first
(triton_to_mosaic_gpu: PAL003's fix of the same get_global), and so is an interpreted pallas_call, which
runs no barrier either (jax 0.12, GPU interpreter: "nan + barrier"): the `plgpu.kernel` keeps its
`interpret=`, and set/force_gpu_interpret_mode reach it too. The GPU interpreter runs a barrier scratch
(jax 0.12), `interpret=True`'s interpreter none, so a launch's own `interpret=True` becomes
`plgpu.InterpretGPUParams()` with the fix. Unsafe: the arrival count is a choice, so
the fix is applied only with `--unsafe-fixes`. Not offered
where the semaphore is also signalled or waited on as a semaphore, where the number of warpgroups is
not written, where another interpreter runs the kernel, for a semaphore array used whole, or where the barrier is waited on but nothing arrives
on it (the fixed kernel would wait forever).
"""

from __future__ import annotations

import ast

from ..analysis.kernel_model import site_interpreter, thread_count
from ..analysis.values import Api
from . import run_scoped_allocation, triton_to_mosaic_gpu
from .barrier_arrivals import arrivals_per_phase
from .allocate_as_scratch import move_to_scratch
from .kernel_edits import CannotFix, FixBuilder, replace_expression
from .sites import interpreted_anywhere, locate


def _operation(project, use) -> str:
    """"wait", "arrive" (barrier_arrive, or a copy completing on it) for a barrier use."""
    callee = project.evaluator.value(use.model, use.node.func) if isinstance(use.node, ast.Call) else None
    return "wait" if isinstance(callee, Api) and callee.name == "plgpu.barrier_wait" else "arrive"


def fix(project, model, finding):
    kernel, call = finding.facts.get("kernel"), finding.facts.get("get_global")
    if kernel is None or call is None or finding.facts.get("model") is not model:
        return None
    site = next((s for s in kernel.get_globals if s.call is call), None)
    memtype = site.memtype if site is not None else None
    # A helper's or lambda's call that returns the get_global marks where its result goes on ("called").
    uses = [use for use in site.uses if use.kind != "called"] if site is not None else []
    if memtype is None or not uses or not isinstance(memtype.shape, tuple):
        return None
    if any(use.kind != "barrier" for use in uses):
        raise CannotFix("the semaphore is also used as a semaphore")
    if any(use.indices != len(memtype.shape) for use in uses):
        return None  # a semaphore array used whole as one barrier, or indexed in part: no barrier is that
    operations = {_operation(project, use) for use in uses}
    if "wait" in operations and "arrive" not in operations:
        raise CannotFix("nothing arrives on the barrier it waits on")
    use, where, entries = locate(project, model, call) or (None, None, [])
    scoped = bool(entries) and all(e.api == "pl.kernel" and not (e.interpret or e.maybe_interpret) for e in entries)
    triton = []  # grid ranks of Triton launches made plgpu.kernels first: Triton has no barrier (nor scratch)
    if entries and all(e.api == "pl.pallas_call" and e.model is model for e in entries):
        # An interpreted one too: _hlo_interpret_keywords below refuses all but the GPU interpreter
        triton = triton_to_mosaic_gpu.convertible(entries, interpreted=True)
    elif not scoped and (not entries or any(e.api != "plgpu.kernel" for e in entries)):
        raise CannotFix("only a plgpu.kernel takes scratch_types here")
    if len({id(e.model) for e in entries}) != 1:
        raise CannotFix("the launches are in several modules")
    threads = {1} if triton else {thread_count(project, entry) for entry in entries}  # plgpu.kernel's default
    if len(threads) != 1 or None in threads:
        raise CannotFix("the number of warpgroups, which is the number of arrivals, is not written")
    arrivals = arrivals_per_phase(project, kernel, [u for u in uses if _operation(project, u) == "arrive"],
                                  next(iter(threads)))
    if arrivals is None:  # sized by the thread count, a warp-specialized barrier would wait forever
        raise CannotFix("how many warpgroups arrive on the barrier per phase is not provable")
    to_gpu_interpreter = []  # `interpret=True` keywords of the launches, which become the GPU interpreter
    # The barrier's function may be one the body hands to pl.run_scoped, which no launch names: its launches say.
    if interpreted_anywhere(project, model, use.function) or any(e.interpret or e.maybe_interpret for e in entries):
        to_gpu_interpreter = _hlo_interpret_keywords(project, model, entries)
    arguments = [f"num_arrivals={arrivals}"] if arrivals > 1 else []
    if memtype.shape:
        shape = memtype.shape
        arguments.append(f"num_barriers={shape[0] if len(shape) == 1 else shape!r}")
    barrier = f"Barrier({', '.join(arguments)})"
    if scoped:  # a compiled pl.kernel takes no scratch: the barrier is allocated for the rest of the function
        return run_scoped_allocation.allocate(project, model, call, finding.code, barrier)
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    _, launch_imports = builder.file(entries[0].model)  # the launch's module: the barrier is spelled there
    for entry, rank in zip(entries, triton):
        triton_to_mosaic_gpu.convert(builder, entry, rank)
    for node in to_gpu_interpreter:
        replace_expression(builder, model, node, f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.InterpretGPUParams()")
    note = move_to_scratch(builder, model, use, where, entries,
                           lambda: f"{launch_imports.name('jax.experimental.pallas.mosaic_gpu')}.{barrier}",
                           fallback="barrier_ref", keyword_name="scratch_types")
    through = (f", through {where.helper.name}" if where.helper is not None else "") + note
    if triton and any(e.interpret or e.maybe_interpret for e in entries):
        switched = "; interpret=True runs no barrier, plgpu.InterpretGPUParams() runs it" if to_gpu_interpreter else ""
        return builder.fix(f"pallas-lsp ({finding.code}): {triton_to_mosaic_gpu.TITLE} with an SMEM barrier, "
                           f"plgpu.{barrier} in scratch_types, run by the GPU interpreter{through} (unsafe: "
                           f"{triton_to_mosaic_gpu.UNSAFE}, where it is compiled{switched}; the arrival count is a choice)",
                           "unsafe")
    if triton:
        return builder.fix(f"pallas-lsp ({finding.code}): {triton_to_mosaic_gpu.TITLE} with an SMEM barrier, "
                           f"plgpu.{barrier} in scratch_types, instead of Triton{through} (unsafe: "
                           f"{triton_to_mosaic_gpu.UNSAFE}, and the arrival count is a choice)", "unsafe")
    if to_gpu_interpreter:
        return builder.fix(f"pallas-lsp ({finding.code}): Use an SMEM barrier, plgpu.{barrier} in scratch_types{through}, "
                           "run by the GPU interpreter (unsafe: interpret=True runs no barrier, "
                           "plgpu.InterpretGPUParams() runs it instead; the arrival count is a choice)", "unsafe")
    return builder.fix(f"pallas-lsp ({finding.code}): Use an SMEM barrier, plgpu.{barrier} in scratch_types{through}",
                       "unsafe")


def _hlo_interpret_keywords(project, model, entries) -> list:
    """The `interpret=True` values of the launches to make `plgpu.InterpretGPUParams()`: the GPU interpreter
    runs a barrier (jax 0.12), interpret=True's does not ('No state discharge rule implemented for primitive:
    barrier_arrive'). CannotFix where another switch, or a value known only at run time, makes a launch
    interpreted."""
    nodes = []
    for entry in entries:
        if entry.maybe_interpret and any(site_interpreter(project, entry, s) != "gpu" for s in entry.maybe_interpret):
            raise CannotFix("whether the kernel runs interpreted, and by which interpreter, is known only at run time")
        for site in entry.interpret:
            if site_interpreter(project, entry, site) == "gpu":
                continue  # plgpu.InterpretGPUParams, force/set_gpu_interpret_mode: it runs barriers
            keyword = entry.kernel.kwarg("interpret")
            if not (keyword and keyword[1] is site.node and site.node is not entry.node and site.model is model
                    and isinstance(site.node, ast.Constant) and site.node.value is True):
                raise CannotFix("the kernel runs in interpret mode, whose interpreter runs no barrier, and not by "
                                "an interpret=True of its launch")
            nodes.append(site.node)
    return nodes
