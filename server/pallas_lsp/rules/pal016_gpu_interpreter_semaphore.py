"""PAL016 gpu-interpreter-semaphore: a scratch or `pl.run_scoped` semaphore in a kernel JAX's GPU interpreter runs.

The GPU interpreter (`interpret=plgpu.InterpretGPUParams()`, `plgpu.force_gpu_interpret_mode()`,
`plgpu.set_gpu_interpret_mode(...)`) fills each buffer it allocates with NaN, which a semaphore cannot hold:
a `plgpu.SemaphoreType.REGULAR` (or BARRIER) in `scratch_types` or from `pl.run_scoped` fails as the kernel
starts, even one the body never uses: `NotImplementedError: nan + semaphore` (jax 0.12,
jax/_src/pallas/mosaic/interpret/utils.py; with `uninitialized_memory="zero"`, `AttributeError: type object
'AbstractSemaphoreTyRules' has no attribute 'full'`). JAX names no line: reported where the kernel is
launched for a scratch semaphore (the interpreter allocates scratch first), at the `pl.run_scoped` call for
a scoped one. `interpret=True` runs them, and so does the compiled kernel; a semaphore operand
(`plgpu.alloc_semaphore()`) runs under the GPU interpreter too. A warning where a run-time value chooses the
GPU interpreter. Not reported where the kernel already fails while tracing (another rule's finding on it).
"""

from __future__ import annotations

import sys

from ..analysis.gpu_interpreter import failure_quote, gpu_interpreter_sites, unallocated_semaphores
from ..analysis.kernels import KernelIndex
from ..analysis.launches import kernel_launches
from . import (pal005_semaphore_index, pal008_semaphore_kernel_boundary, pal013_signal_wait_semaphore_type,
               pal014_signal_wait_not_ref)

CODE = "PAL016"
NAME = "gpu-interpreter-semaphore"
SEVERITY = "error"
SUMMARY = "A scratch or pl.run_scoped semaphore in a kernel the GPU interpreter runs: it allocates no semaphore."

GPU_APIS = ("plgpu.kernel", "pl.kernel", "pl.core_map")
# Rules whose errors JAX raises while tracing the body, before the interpreter allocates anything.
TRACED_FIRST = (pal005_semaphore_index, pal008_semaphore_kernel_boundary, pal013_signal_wait_semaphore_type,
                pal014_signal_wait_not_ref)


def message(quote: str, sem, certain: bool) -> str:
    where = "in scratch_types" if sem.allocated_at is None else "from pl.run_scoped"
    head = f'JAX: "{quote}"' if certain else f'JAX, under the GPU interpreter: "{quote}"'
    return (f"{head}; use interpret=True. The GPU interpreter fills new memory with NaN, "
            f"which a semaphore cannot hold, so a {sem.dtype} {where} fails as the kernel starts, used or not "
            "(interpret=True and the compiled kernel run it; a plgpu.alloc_semaphore() operand runs there too).")


def check(ctx):
    rule = sys.modules[__name__]
    project, model = ctx.project, ctx.model
    if not model.mentions("emaphore"):
        return
    candidates = [(kernel, semaphores) for kernel in ctx.kernels_here_and_in_importers()
                  if kernel.entry.api in GPU_APIS and (semaphores := unallocated_semaphores(kernel))]
    if not candidates:
        return
    for importer in project.importers(model):  # a test's `with force_gpu_interpret_mode():` marks kernels here
        if project.index.mentions_interpret(importer.path):
            KernelIndex.of(project, importer)
    reported: set[int] = set()
    for kernel, semaphores in candidates:
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            certain, maybe = gpu_interpreter_sites(project, kernel.entry)
            if not (certain or maybe) or ctx.reported_on(kernel, TRACED_FIRST):
                continue
            sites = certain or maybe
            scratch = [sem for sem in semaphores if sem.allocated_at is None]
            if scratch:  # allocated before the body runs: JAX fails there, at the launch
                sem = scratch[0]
                launches = [launch.call for launch in kernel_launches(project, model)
                            if launch.kernel == kernel.entry.kernel]
                places = [(model, node) for node in launches] or [(kernel.entry.model, kernel.entry.node)]
            else:
                sem = _first_scoped(semaphores)
                places = [sem.allocated_at]
            for place_model, node in places:
                if place_model is not model or id(node) in reported:
                    continue
                reported.add(id(node))
                related = [ctx.related(site.model, site.node, f"the GPU interpreter {'runs' if certain else 'may run'} "
                                       f"the kernel because of {site.reason}") for site in sites]
                related.append(ctx.related(sem.model, sem.node, f"the semaphore, a {sem.dtype}, is {sem.origin}"))
                related.append(ctx.entry_related(kernel))
                yield ctx.finding(rule, node, message(failure_quote(project, sites[0], sem.dtype), sem, bool(certain)),
                                  tuple(related), facts={"kernel": kernel, "entry": kernel.entry, "semaphore": sem,
                                                         "interpret": list(sites), "certain": bool(certain)},
                                  severity=None if certain else "warning")


def _first_scoped(semaphores):
    """The `pl.run_scoped` semaphore the interpreter reaches first: the earliest call in one function."""
    return min(semaphores, key=lambda sem: (sem.allocated_at[1].lineno, sem.allocated_at[1].col_offset))
