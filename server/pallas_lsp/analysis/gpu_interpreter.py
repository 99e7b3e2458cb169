"""Where JAX's GPU interpreter runs a kernel, and what it cannot allocate there (one check for rules and fixes).

The GPU interpreter (`interpret=plgpu.InterpretGPUParams(...)`, `plgpu.force_gpu_interpret_mode()`,
`plgpu.set_gpu_interpret_mode(...)`) fills every buffer it allocates with NaN (or zero, with
`uninitialized_memory="zero"`), which a semaphore cannot hold: a REGULAR or BARRIER semaphore in
`scratch_types` or from `pl.run_scoped` fails as the kernel starts, used or not (jax 0.12:
`get_uninitialized_value` in jax/_src/pallas/mosaic/interpret/utils.py raises
`NotImplementedError: nan + semaphore`; with zeros, `jnp.full` of a semaphore dtype raises
`AttributeError: type object 'AbstractSemaphoreTyRules' has no attribute 'full'`). A semaphore operand
(`plgpu.alloc_semaphore()`) is an input buffer, not allocated there: it runs. `interpret=True` (the HLO
interpreter) and the TPU interpreter run scratch semaphores.
"""

from __future__ import annotations

import ast

from .kernel_model import site_interpreter
from .values import Const, InterpretParams, OneOf

# The semaphore dtypes of JAX's Mosaic GPU memory (GMEM) the GPU interpreter fails to allocate.
UNALLOCATED_DTYPES = ("semaphore", "barrier_semaphore")
# Why a fix that leaves (or writes) a scratch semaphore is not offered for a kernel the GPU interpreter runs.
GPU_INTERPRETER_REFUSAL = ("the GPU interpreter runs no semaphore from scratch or pl.run_scoped (jax 0.12: 'nan + semaphore', PAL016): the "
                           "kernel would fail there with the fix as well")
ZERO_FILLED_QUOTE = "AttributeError: type object 'AbstractSemaphoreTyRules' has no attribute 'full'"


def gpu_interpreter_sites(project, entry) -> tuple[list, list]:
    """(sites that certainly run `entry` under the GPU interpreter, sites where a run-time value decides)."""
    certain = [s for s in entry.interpret if site_interpreter(project, entry, s) == "gpu"]
    maybe = [s for s in entry.maybe_interpret if site_interpreter(project, entry, s) == "gpu"
             or _gpu_option(project, s)]
    return certain, maybe


def _gpu_option(project, site) -> bool:
    """`plgpu.InterpretGPUParams() if debug else False`: one of the values a run-time choice gives (a branch of a
    conditional expression or of `or`/`and`, or an option the evaluator knows) is the GPU interpreter's."""
    return any(not value.name.startswith("pltpu.") for value in interpreter_options(project, site))


def interpreter_options(project, site) -> list[InterpretParams]:
    """The interpreters' parameters among the values `site`'s switch may take: each branch of a conditional
    expression or of `or`/`and`, each option the evaluator knows."""
    node = site.node.value if isinstance(site.node, ast.keyword) else site.node
    if not isinstance(node, ast.expr):
        return []
    branches, values = [node], []
    while branches:
        branch = branches.pop()
        if isinstance(branch, ast.IfExp):
            branches += [branch.body, branch.orelse]
        elif isinstance(branch, ast.BoolOp):
            branches += branch.values
        else:
            value = project.evaluator.value(site.model, branch)
            values += value.options if isinstance(value, OneOf) else [value]
    return [value for value in values if isinstance(value, InterpretParams)]


def gpu_interpreted(project, entry) -> bool:
    """Whether a site of `entry` runs it under the GPU interpreter, which allocates no semaphore (a fix that
    writes a scratch semaphore for such a kernel leaves it failing: 'nan + semaphore')."""
    certain, maybe = gpu_interpreter_sites(project, entry)
    return bool(certain or maybe)


def unallocated_semaphores(kernel) -> list:
    """The kernel's semaphores the GPU interpreter would allocate (scratch, `pl.run_scoped`) and cannot: JAX's
    memory-space semaphores (GMEM), not operands."""
    return [sem for sem in kernel.semaphores if sem.space == "gmem" and sem.dtype in UNALLOCATED_DTYPES
            and (sem.origin.startswith("scratch") or sem.allocated_at is not None)]


def failure_quote(project, site, dtype: str) -> str:
    """JAX's words where `site` selects the GPU interpreter: NaN-filled memory (the default) or zeros."""
    if _zero_filled(project, site):
        return ZERO_FILLED_QUOTE
    return f"NotImplementedError: nan + {dtype}"


def _zero_filled(project, site) -> bool:
    """`plgpu.InterpretGPUParams(uninitialized_memory="zero")` written at the site (or bound to the name there)."""
    node, model = site.node, site.model
    node = node.value if isinstance(node, ast.keyword) else node
    if isinstance(node, ast.Name):
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        node = getattr(binding, "value", None) if binding is not None and binding.kind == "assign" else node
    for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)] if isinstance(node, ast.AST) else ():
        for keyword in call.keywords:
            if keyword.arg == "uninitialized_memory":
                value = project.evaluator.value(model, keyword.value)
                return isinstance(value, Const) and value.value == "zero"
    return False
