"""PAL026 tpu-interpreter-mosaic-gpu: a Mosaic GPU kernel run under the TPU interpreter.

`pltpu.InterpretParams(...)` (or `pltpu.force_tpu_interpret_mode()` / `set_tpu_interpret_mode`) given to a
Mosaic GPU kernel (`plgpu.kernel`, `pl.kernel` / `pl.core_map` over a `plgpu.Mesh`) runs it through the TPU
interpreter, which knows only TPU memory spaces: every Mosaic GPU kernel's operands are in GMEM, so it fails as
it starts, whatever the body does: `KeyError: <MemorySpace.GMEM: 'gmem'>` (jax 0.12, checked on a CPU with and
without scratch, with a grid, for `plgpu.kernel` and `pl.kernel` over a `plgpu.Mesh`). The usual cause is a
testing helper written for a TPU suite shared with a GPU kernel. JAX's GPU interpreter,
`plgpu.InterpretGPUParams(...)`, takes the same shared options (`detect_races`, `uninitialized_memory`, ...) and
runs it. Reported at the launch's `interpret=` (its entry point where it has none); a warning where a run-time
value chooses the TPU interpreter.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.gpu_interpreter import interpreter_options
from ..analysis.kernel_model import MOSAIC_GPU, MOSAIC_GPU_WARP, site_interpreter
from ..analysis.kernels import KernelIndex

CODE = "PAL026"
NAME = "tpu-interpreter-mosaic-gpu"
SEVERITY = "error"
SUMMARY = "A Mosaic GPU kernel run under the TPU interpreter (pltpu.InterpretParams): use plgpu.InterpretGPUParams."

QUOTE = "KeyError: <MemorySpace.GMEM: 'gmem'>"


def message(certain: bool) -> str:
    head = f'JAX: "{QUOTE}"' if certain else f'JAX, under the TPU interpreter: "{QUOTE}"'
    return (f"{head}; use plgpu.InterpretGPUParams() with the same options. The TPU interpreter knows only TPU "
            "memory spaces, and a Mosaic GPU kernel's operands are in global memory (GMEM); JAX's GPU "
            "interpreter runs it on a CPU.")


def check(ctx):
    rule = sys.modules[__name__]
    project, model = ctx.project, ctx.model
    if not model.mentions("nterpret"):
        return
    kernels = [k for k in ctx.kernels() if k.entry.model is model
               and k.compiled_backend in (MOSAIC_GPU, MOSAIC_GPU_WARP)]
    if not kernels:
        return
    for importer in project.importers(model):  # a test's `with pltpu.force_tpu_interpret_mode():` marks kernels here
        if project.index.mentions_interpret(importer.path):
            KernelIndex.of(project, importer)
    for kernel in kernels:
        entry = kernel.entry
        with ctx.isolated(rule, entry.node, entry.model):
            certain, maybe = tpu_interpreter_sites(project, entry)
            if not (certain or maybe):
                continue
            sites = certain or maybe
            keyword = next((k for k in getattr(entry.node, "keywords", ()) if k.arg == "interpret"), None)
            at = keyword if keyword is not None else entry.node
            related = [ctx.related(site.model, site.node, f"the TPU interpreter {'runs' if certain else 'may run'} "
                                   f"the kernel because of {site.reason}") for site in sites
                       if isinstance(site.node, ast.AST)]
            related.append(ctx.entry_related(kernel))
            yield ctx.finding(rule, at, message(bool(certain)), tuple(related),
                              facts={"kernel": kernel, "entry": entry, "interpret": list(sites),
                                     "certain": bool(certain)},
                              severity=None if certain else "warning")


def tpu_interpreter_sites(project, entry) -> tuple[list, list]:
    """(sites that certainly run `entry` under the TPU interpreter, sites where a run-time value decides)."""
    certain = [s for s in entry.interpret if site_interpreter(project, entry, s) == "tpu"]
    maybe = [s for s in entry.maybe_interpret if site_interpreter(project, entry, s) == "tpu" or _tpu_option(project, s)]
    return certain, maybe


def _tpu_option(project, site) -> bool:
    """`pltpu.InterpretParams() if debug else False`: a value a run-time choice may give is the TPU interpreter's."""
    return any(value.name.startswith("pltpu.") for value in interpreter_options(project, site))
