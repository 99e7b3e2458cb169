"""Fix (PAL006): a Mosaic GPU semaphore type allocated where the kernel uses a barrier becomes a `plgpu.Barrier`.

    scratch_types=[plgpu.SMEM(...), plgpu.SemaphoreType.BARRIER]   ->   [plgpu.SMEM(...), plgpu.Barrier()]

A semaphore of `scratch_types` (or `pl.run_scoped`) that is only ever a barrier (a copy's `barrier=`,
`plgpu.barrier_wait`, `plgpu.barrier_arrive`) was meant to be one: the barrier operations are all the kernel
does with it, and JAX refuses any semaphore there ("barrier must be a SMEM reference"). The type is replaced
where it is written (the scratch list, a config method's returned tuple, a module constant read there alone,
as the DMA -> REGULAR fix of PAL013 finds it). A semaphore array indexed in full at each use becomes
`num_barriers=` of its length, its `.at[]` views kept. Its arrivals per phase: the number of copies and
arrivals on it where one warpgroup runs them all in one function (jax's emit_pipeline sizes its barriers
`num_arrivals=len(in_specs)`), the warpgroups that arrive where several do (barrier_arrivals); no fix where
that is not provable, or where the semaphore is also signalled, waited on or read as a semaphore. Unsafe: the
arrival count is a choice.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import thread_count
from .barrier_as_scratch import _operation
from .barrier_arrivals import arrivals_per_phase
from .kernel_edits import CannotFix, FixBuilder
from .regular_semaphore import _type_expression, _written_here

_KINDS = ("REGULAR", "BARRIER")


def fix(project, model, finding):
    facts = finding.facts
    kernel, node = facts.get("kernel"), facts.get("semaphore")
    if kernel is None or node is None or facts.get("get_global") is not None:
        return None
    sem = next((s for s in kernel.semaphores if s.node is node), None)
    if sem is None or sem.space != "gmem":
        return None
    if any(use.kind != "barrier" for use in sem.uses):
        raise CannotFix("the semaphore is also used as a semaphore")
    if len(sem.shape) > 1 or any(use.indices != len(sem.shape) for use in sem.uses):
        raise CannotFix("the semaphore array is used whole, or has more than one dimension")
    arrivals = _arrivals(project, kernel, sem)
    expr = _type_expression(project, kernel, sem)
    written = _written_here(project, sem.model, expr, _KINDS) if expr is not None else None
    if written is None:
        raise CannotFix("the semaphore's type is not written where it is allocated, in this module, nor in a "
                        "module constant read only there")
    where, attribute = written
    parent = where.parents.get(attribute)
    target = parent if isinstance(parent, ast.Call) and parent.func is attribute else attribute
    arguments = [f"num_arrivals={arrivals}"] if arrivals > 1 else []
    if sem.shape:
        arguments.append(f"num_barriers={_length(where, target)}")
    builder = FixBuilder(project)
    file, imports = builder.file(where)
    found = file.find_ast(where, target, cst.Call if isinstance(target, ast.Call) else cst.Attribute)
    if found is None:
        raise CannotFix("the semaphore's type was not found")
    barrier = f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.Barrier({', '.join(arguments)})"
    file.rewrite(found, lambda updated: cst.parse_expression(barrier))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate an SMEM barrier, plgpu.Barrier({', '.join(arguments)}), "
                       "in place of the semaphore (unsafe: the arrival count is a choice)", "unsafe")


def _length(model, written: ast.expr) -> str:
    """The array's length as its type writes it (`REGULAR((self.slots,))`: `self.slots`), so the barriers are
    as many for every configuration."""
    shape = written.args[0] if isinstance(written, ast.Call) and len(written.args) == 1 and not written.keywords \
        else next((k.value for k in getattr(written, "keywords", ()) if k.arg == "shape"), None)
    if isinstance(shape, ast.Tuple) and len(shape.elts) == 1 and not isinstance(shape.elts[0], ast.Starred):
        shape = shape.elts[0]
    if shape is None or isinstance(shape, (ast.Tuple, ast.List)):
        raise CannotFix("the semaphore array's length is not written as one dimension")
    return ast.get_source_segment(model.text, shape)


def _arrivals(project, kernel, sem) -> int:
    """Arrivals per phase of the barrier the semaphore becomes; CannotFix where not provable."""
    arrive = [use for use in sem.uses if _operation(project, use) == "arrive"]
    if not arrive:
        raise CannotFix("nothing arrives on the barrier it waits on")
    if sem.shape and len(arrive) > 1:  # which element each arrives on is not followed: one count for all is a guess
        raise CannotFix("several arrivals on a barrier array: how many each barrier gets is not provable")
    threads = thread_count(project, kernel.entry)
    if threads is None:
        raise CannotFix("the number of warpgroups, which is the number of arrivals, is not written")
    if threads > 1:
        arrivals = arrivals_per_phase(project, kernel, arrive, threads)
        if len(arrive) > 1 and arrivals is not None and arrivals != len(arrive):
            arrivals = None  # several arrivals, each by one warpgroup of several: which phase each makes not known
    else:  # one warpgroup: each copy or arrival on it counts once, where they sit side by side in one function
        functions = {(id(use.model), id(use.model.enclosing_function(use.node))) for use in arrive}
        arrivals = len(arrive) if len(functions) == 1 and not any(_conditional(use) for use in arrive) else None
    if arrivals is None:
        raise CannotFix("how many arrivals the barrier gets per phase is not provable")
    return arrivals


def _conditional(use) -> bool:
    """Is the arrival under an `if`, a loop or a `with` of its function (run some phases, or several times)?"""
    node = use.model.parents.get(use.node)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(node, (ast.If, ast.IfExp, ast.For, ast.While, ast.Try, ast.Match, ast.With)):
            return True
        node = use.model.parents.get(node)
    return False
