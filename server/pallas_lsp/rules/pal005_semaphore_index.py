"""PAL005 semaphore-index: a shaped semaphore signalled, waited on, read (TPU) or given to a DMA without a full index.

`pl.get_global(plgpu.SemaphoreType.REGULAR((n,)))`, a scratch or `pl.run_scoped` `SemaphoreType.X((n,))`,
a `plgpu.alloc_semaphore((n,))` operand are arrays of semaphores; `pl.semaphore_signal`,
`pl.semaphore_wait` and a TPU copy's send and receive semaphores take one, `sem.at[i]` (one index per
dimension). JAX checks this while tracing: `ValueError: Cannot signal on a non-()-shaped semaphore: (2,)`
(for a copy at its `.start()`), and for too many indices ``ValueError: `indices` must not be longer than `shape` ``.
Mosaic TPU checks `pl.semaphore_read`'s as it lowers the kernel (`Cannot read on a non-()-shaped semaphore: (2, 3)`;
Mosaic GPU reads a shaped one). `pl.select_ref(i, *sems)` for a TPU copy chooses between semaphores of one shape:
`TypeError: Cannot select from Refs of different types` where the chosen one is used.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.evaluate import as_memtype
from ..analysis.kernel_model import reads_checked, uses_of
from ..analysis.kernels import get_global_argument, get_global_calls
from ..analysis.result_uses import COPY_APIS, calls_barrier_use
from ..analysis.values import MemType, shape_text

CODE = "PAL005"
NAME = "semaphore-index"
SEVERITY = "error"
SUMMARY = "signal/wait/DMA on a shaped semaphore (global, scratch, operand, run_scoped) needs one .at[] index per dimension."


_DMA = {"dma_src": "send (source)", "dma_dst": "receive (destination)"}


def problem(shape: tuple[int, ...], kind: str, indices: int) -> str | None:
    if indices < len(shape):
        rest = shape[indices:]
        verb = "signal" if kind in _DMA else kind
        quoted = f"ValueError: Cannot {verb} on a non-()-shaped semaphore: {shape_text(rest)}"
        index = ", ".join("ijklmn"[n % 6] for n in range(len(rest)))
        acts = (f"a copy's {_DMA[kind]} semaphore is a single semaphore" if kind in _DMA
                else "pl.semaphore_read reads a single semaphore (Mosaic TPU checks it as it lowers the kernel)"
                if kind == "read" else "signal and wait act on a single semaphore")
        return (f'JAX: "{quoted}"; index it down to one semaphore: .at[{index}]. The semaphore has shape '
                f"{shape_text(shape)} and {indices} of its {len(shape)} dimension{'s' if len(shape) > 1 else ''} "
                f"{'are' if indices != 1 else 'is'} indexed; {acts}.")
    if indices > len(shape):
        quoted = f"ValueError: `indices` must not be longer than `shape`: ..., shape={shape_text(shape)}"
        return (f'JAX: "{quoted}"; use {len(shape)} index{"es" if len(shape) != 1 else ""}. '
                f"The semaphore has shape {shape_text(shape)} but {indices} indices are applied.")
    return None


def check(ctx):
    reported: set[int] = set()
    for kernel, site in ctx.kernels_reaching():
        memtype = site.memtype
        if memtype is not None and memtype.shape is not None:
            yield from _report(ctx, kernel, memtype.shape, site.uses, ("signal", "wait"), reported,
                               (site.model, site.call, "comes from here"), {"get_global": site.call})
    # JAX checks the indices while tracing, before lowering decides anything: a get_global no kernel reaches
    # (in a jitted function) or of a type get_global refuses fails here first too.
    for call, memtype, uses in traced_get_globals(ctx, {id(site.call) for _, site in ctx.kernels_reaching()}):
        yield from _report(ctx, None, memtype.shape, uses, ("signal", "wait"), reported,
                           (ctx.model, call, "comes from here"), {"get_global": call})
    if "arrier" in ctx.model.text and calls_barrier_use(ctx.project, ctx.model):
        # every finding is a barrier use of this module: one that calls no barrier op (a setting named "barrier")
        # leaves its importers' kernels unsearched, as PAL006 does
        yield from _whole_barriers(ctx, reported)
    if "emaphore" not in ctx.model.text and "async" not in ctx.model.text:
        return  # a helper module that only copies (pltpu.make_async_copy(..., sem)) names no semaphore
    # A kernel launched in an importer reaches a semaphore here through code that names one, or a helper's copy
    # (the "async" above); a module naming neither ("async" in a checkpoint setting) is not searched for them.
    importers = "emaphore" in ctx.model.text or ctx.calls_any(COPY_APIS)
    for kernel in ctx.kernels_here_and_in_importers(importers):
        unlike = yield from _unlike_selections(ctx, kernel, reported)
        for sem in kernel.semaphores:
            uses = [use for use in sem.uses if use.selected_by is None or id(use.selected_by) not in unlike]
            # Mosaic TPU checks a read's shape too, as it lowers the kernel (Mosaic GPU reads a shaped one).
            kinds = ("signal", "wait", *_DMA, "read") if reads_checked(kernel.backend, [sem]) else ("signal", "wait", *_DMA)
            yield from _report(ctx, kernel, sem.shape, uses, kinds, reported,
                               (sem.model, sem.node, f"is {sem.origin}"), {"semaphore": sem.node})


def _whole_barriers(ctx, reported):
    """A Mosaic GPU barrier array (`plgpu.Barrier(num_barriers=2)` in scratch or `pl.run_scoped`) given whole to
    a copy, `barrier_wait` or `barrier_arrive`: each acts on one barrier. JAX refuses it as it lowers the kernel."""
    from ..analysis.arithmetic import product
    from ..analysis.barrier_refs import kernel_barriers, run_scoped_barriers

    refs = [(kernel, ref) for kernel in ctx.kernels_here_and_in_importers() for ref in kernel_barriers(ctx.project, kernel)]
    refs += [(None, ref) for ref in run_scoped_barriers(ctx.project, ctx.model)]
    seen: set[int] = set()
    for kernel, ref in refs:
        if id(ref.node) in seen:
            continue
        seen.add(id(ref.node))
        interpreted = _barrier_interpreter(ctx, kernel)
        if interpreted is None:
            continue  # interpret=True, or a backend not known: JAX's message there is not checked
        for use in ref.uses:
            if use.kind != "barrier" or use.indices is None or use.indices >= len(ref.shape) \
                    or use.model is not ctx.model or id(use.node) in reported:
                continue
            count = product(ref.shape[use.indices:])
            if count is None or count <= 1:
                continue
            with ctx.isolated(sys.modules[__name__], use.node, use.model):
                reported.add(id(use.node))
                quoted = (f"Attempting to operate on barrier without indexing, but `num_barriers = {count}`"
                          if interpreted else
                          f"Operation is only valid for a single barrier, but barrier ref contains {count}")
                index = ", ".join("ijklmn"[n % 6] for n in range(len(ref.shape) - use.indices))
                message = (f'JAX: "ValueError: {quoted}"; index it: .at[{index}]. The barrier array has shape '
                           f"{shape_text(ref.shape)}; a copy, barrier_wait and barrier_arrive each act on a single "
                           "barrier (JAX: \"Individual barriers can be accessed by indexing into the ref.\").")
                related = (ctx.related(ref.model, ref.node, f"the barrier array, shape {shape_text(ref.shape)}, "
                                       f"is {ref.origin}"),)
                yield ctx.finding(sys.modules[__name__], use.node, message, related,
                                  facts={"kernel": kernel, "model": ref.model, "use": use, "shape": ref.shape,
                                         "barrier": ref.node, "entry": kernel.entry if kernel is not None else None})


def _barrier_interpreter(ctx, kernel) -> bool | None:
    """False where the barriers' kernel is compiled for Mosaic GPU (a `pl.run_scoped`'s: every kernel of the module
    is), True where the GPU interpreter runs it (its own message, jax 0.12), None otherwise."""
    from ..analysis.gpu_interpreter import gpu_interpreter_sites
    from ..analysis.kernel_model import INTERPRET, MOSAIC_GPU

    kernels = [kernel] if kernel is not None else list(ctx.kernels())
    if kernels and all(k.backend == MOSAIC_GPU for k in kernels):
        return False
    if kernel is not None and kernel.backend == INTERPRET:
        certain, maybe = gpu_interpreter_sites(ctx.project, kernel.entry)
        return True if certain and not maybe else None
    return None


def _unlike_selections(ctx, kernel, reported):
    """Findings for each `pl.select_ref(i, *refs)` of this module choosing between views of the kernel's semaphores
    of different shapes (`sems` and `sems.at[1]`): JAX refuses the selection itself, `TypeError: Cannot select from
    Refs of different types` where the chosen ref is used. Returns the ids of those calls (the chosen ref's
    other checks are not reached)."""
    chosen: dict[int, list] = {}
    for sem in kernel.semaphores:
        for use in sem.uses:
            if use.kind == "select" and use.indices is not None and use.indices <= len(sem.shape):
                chosen.setdefault(id(use.node), []).append((use, sem))
    unlike = set()
    for options in chosen.values():
        use, _ = options[0]
        refs = use.node.args[1:]
        options = _in_order(options, refs)
        shapes = [sem.shape[option.indices:] for option, sem in options]
        if len(options) != len(refs) or any(isinstance(r, ast.Starred) for r in refs) or len(set(shapes)) < 2 \
                or use.model is not ctx.model:
            continue  # a ref that is no known semaphore, or alike ones: what the chosen one is used for decides
        unlike.add(id(use.node))
        # The selection is a lazy transform of the refs: JAX fails where the chosen ref is used (a copy's start).
        at = next((u.node for _, sem in options for u in sem.uses if u.selected_by is use.node and u.kind != "select"
                   and u.model is ctx.model), None)
        if at is None or id(at) in reported:
            continue
        reported.add(id(at))
        with ctx.isolated(sys.modules[__name__], use.node, use.model):
            pictures = ", ".join(f"Ref<semaphore_mem>{{{sem.dtype}[{shape_text(shape, ',')}]}}"
                                 for shape, (_, sem) in zip(shapes, options))
            quoted = "TypeError: Cannot select from Refs of different types: (...)"
            views = ", ".join(f"{ctx.model.segment(ref, 30)} has shape {shape_text(shape) if shape else '()'}"
                              for ref, shape in zip(refs, shapes))
            message = (f'JAX: "{quoted}"; index each to the same shape (.at[i]). pl.select_ref chooses between refs '
                       f"of one type, and these are {pictures}: {views}.")
            related = tuple(ctx.related(sem.model, sem.node, f"the semaphore, shape {shape_text(sem.shape)}, is "
                                        f"{sem.origin}") for sem in {id(s.node): s for _, s in options}.values())
            yield ctx.finding(sys.modules[__name__], at, message, related,
                              facts={"kernel": kernel, "model": use.model, "select": use.node,
                                     "entry": kernel.entry})
    return unlike


def _in_order(options, refs):
    """The (use, semaphore) pairs in the order of the refs they are: a view's use names its `.at[]` (`at`)."""
    left = list(options)
    ordered = []
    for ref in refs:
        found = next((o for o in left if o[0].at is ref), None) or next((o for o in left if o[0].at not in refs), None)
        if found is None:
            return options
        left.remove(found)
        ordered.append(found)
    return ordered


def traced_get_globals(ctx, reached: set[int]):
    """(call, memtype, uses) of this module's get_globals in functions no kernel reaches (the `reached` call
    ids), with a memory type of known shape: JAX traces them as well when a jitted function runs them."""
    for call in get_global_calls(ctx.project, ctx.model):
        if id(call) in reached or ctx.model.enclosing_function(call) is None:
            continue  # at module level get_global fails as it is called (PAL008)
        argument = get_global_argument(call)
        memtype = as_memtype(ctx.project.evaluator.value(ctx.model, argument)) if argument is not None else None
        if isinstance(memtype, MemType) and memtype.shape is not None:
            yield call, memtype, uses_of(ctx.project, ctx.model, call)


def _report(ctx, kernel, shape, uses, kinds, reported, source, facts):
    """A finding for each use of a `shape`d semaphore (from `source`: model, node, words) not indexed down to one."""
    model, node, words = source
    for use in uses:
        with ctx.isolated(sys.modules[__name__], use.node, use.model):
            if use.indices is None or use.model is not ctx.model or id(use.node) in reported:
                continue
            if use.kind not in kinds and not (use.indices > len(shape) and use.kind not in _DMA):
                continue  # `.at[]` with too many indices fails on any use (semaphore_read, a copy's); a short index only on kinds
            message = problem(shape, use.kind, use.indices)
            if message:
                reported.add(id(use.node))
                related = (ctx.related(model, node, f"the semaphore, shape {shape_text(shape)}, {words}"),)
                # Too many indices fail at the `.at[]` itself (a copy's semaphore, before the copy starts).
                at = use.at if use.indices > len(shape) and use.at is not None else use.node
                yield ctx.finding(sys.modules[__name__], at, message, related,
                                  facts={"kernel": kernel, "model": model, "use": use, "shape": shape,
                                         "entry": kernel.entry if kernel is not None else None, **facts})
