"""Fix (PAL013): `pl.semaphore_wait(barrier)` on a `plgpu.Barrier` becomes `plgpu.barrier_wait(barrier)`.

A barrier completes a phase when its arrivals (copies, `plgpu.barrier_arrive`) are in; waiting for that
phase is `plgpu.barrier_wait`, which is what a wait for one "signal" on a barrier can mean (jax 0.12 refuses
the barrier in `pl.semaphore_wait`: "Must wait semaphores of the following types: {...}. Got barrier").
Only for a wait of one (no count, or 1): a count of more has no barrier meaning. A `pl.semaphore_signal` of a
barrier is left alone: whether it is one more arrival the barrier's `num_arrivals` counts is not known.
"""

from __future__ import annotations

import ast

from ..analysis.values import Const
from .kernel_edits import CannotFix, FixBuilder, replace_expression


def fix(project, model, finding):
    facts = finding.facts
    use = facts.get("use")
    if facts.get("barrier") is None or use is None or use.model is not model:
        return None
    if use.kind != "wait":
        raise CannotFix("a signal of a barrier may or may not be one of the arrivals its num_arrivals counts")
    call = use.node
    value = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "value"), None)
    if len(call.args) > 2 or any(k.arg != "value" for k in call.keywords) or (
            value is not None and project.evaluator.value(model, value) != Const(1)):
        raise CannotFix("the wait is for more than one signal, which has no barrier meaning")
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    ref = ast.get_source_segment(model.text, call.args[0]) if call.args else None
    if ref is None:
        raise CannotFix("the barrier is not passed positionally")
    replace_expression(builder, model, call, f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.barrier_wait({ref})")
    return builder.fix(f"pallas-lsp ({finding.code}): Wait on the barrier: plgpu.barrier_wait({ref})", "safe",
                       preferred=True)
