"""Fix (PAL005): a TMA copy given a whole barrier array gets the barrier of the buffer slot it fills.

    plgpu.copy_gmem_to_smem(x_gmem.at[rows], ring.at[slot], ready)   ->   ..., ring.at[slot], ready.at[slot])

Double-buffered Mosaic GPU kernels allocate a ring of SMEM slots and one barrier per slot
(`plgpu.SMEM((2, ...))`, `plgpu.Barrier(num_arrivals=1, num_barriers=2)`); a load into slot `s` arrives on
barrier `s`, and the wait for slot `s` waits on it. Where the copy's destination is a view of a scratch buffer
whose leading dimension is as long as the barrier array (or not known statically), indexed first by one expression (`ring.at[slot]`, also
through a name assigned once), that expression is the barrier's index. Unsafe: the pairing is how such kernels
are written (copy_slot's, for TPU DMA semaphores), not something the code says. A whole barrier given to
`barrier_wait` / `barrier_arrive` has no such slot: no fix.
"""

from __future__ import annotations

import ast

from ..analysis.kernel_args import kernel_parameters
from ..analysis.values import Api
from .copy_slot import _held, _root_parameter, _slot_index
from .index_semaphore import _at_index
from .kernel_edits import CannotFix, FixBuilder

_COPIES = {"plgpu.copy_gmem_to_smem": (1, 2)}  # the copy: positions of its destination and its barrier


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def fix(project, model, finding):
    facts = finding.facts
    use, shape, kernel, source = (facts.get(key) for key in ("use", "shape", "kernel", "barrier"))
    if use is None or use.kind != "barrier" or source is None or shape is None:
        return None
    if kernel is None or use.indices != 0 or len(shape) != 1 or use.model is not model \
            or not isinstance(use.node, ast.Call):
        raise CannotFix("which barrier of the array is meant is not known (not a one-dimensional scratch array)")
    called = project.evaluator.value(model, use.node.func)
    positions = _COPIES.get(called.name) if isinstance(called, Api) else None
    if positions is None:
        raise CannotFix("a whole barrier array waited on or arrived at: which barrier is meant is not known")
    destination = _argument(use.node, positions[0], "dst")
    barrier = _argument(use.node, positions[1], "barrier")
    if destination is None or not isinstance(barrier, (ast.Name, ast.Attribute)):
        raise CannotFix("the copy's destination or barrier is not written as an argument")
    params = kernel_parameters(project, kernel.entry)
    if not any(p.node is source and p.role == "scratch" for p in params):
        raise CannotFix("the barrier array is not the kernel's scratch")
    scratch = {id(p.node): p for p in params if p.role == "scratch" and p.node is not source}
    slot = _slot_index(model, destination, set(scratch))
    view = _held(model, destination)
    root = _root_parameter(model, view.value.value) if slot is not None else None
    buffer = scratch.get(id(root)) if root is not None else None
    if buffer is None or buffer.shape is not None and (not buffer.shape or buffer.shape[0] != shape[0]):
        raise CannotFix("the copy fills no slot of a scratch ring as long as the barrier array")
    builder = FixBuilder(project)
    _at_index(builder, model, barrier, [slot])
    return builder.fix(f"pallas-lsp ({finding.code}): Give the copy the barrier of the slot it fills: .at[{slot}]",
                       "unsafe")
