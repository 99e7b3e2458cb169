"""What JAX says when an interpreter meets a `get_global` semaphore, by interpreter and semaphore (jax 0.12).

Each interpreter fails at the first primitive that sees the global ref, so the words depend on how the
semaphore is used: the TPU interpreter (`pltpu.InterpretParams`) slices a semaphore array (`sems.at[slot]`)
before anything else ('Attempting to pass a Ref ... to a primitive: dynamic_slice'); `interpret=True` gives a
DMA semaphore to the copy's type promotion ('dtype=dma_sem is not a valid dtype'); otherwise the HLO
lowering meets the ref itself ('No ir_type_handler for aval type'). Checked by running JAX on each form.
"""

from __future__ import annotations

import ast

from .evaluate import as_memtype
from .returns import returns_in
from .values import Func, InterpretParams, MemType

NO_IR_TYPE_QUOTE = "TypeError: No ir_type_handler for aval type: <class '...AbstractRef'>"
DMA_SEM_QUOTE = "ValueError: dtype=dma_sem is not a valid dtype for JAX type promotion."


def interpreted_quote(what, interpreter: str | None) -> str:
    """JAX's first error line for a get_global of `what` (its value) under `interpreter` ("tpu", "gpu", "hlo")."""
    memtype = as_memtype(what) if what is not None else None
    if not isinstance(memtype, MemType) or memtype.dtype not in ("dma_sem", "semaphore"):
        return NO_IR_TYPE_QUOTE
    if interpreter == "tpu" and memtype.shape:
        shape = ",".join(str(n) for n in memtype.shape)
        return (f"ValueError: Attempting to pass a Ref Ref<semaphore_mem>{{{memtype.dtype}[{shape}]}} to a primitive: "
                "dynamic_slice")
    if interpreter == "hlo" and memtype.dtype == "dma_sem":
        return DMA_SEM_QUOTE
    return NO_IR_TYPE_QUOTE


def chosen_interpreter(project, entry) -> str | None:
    """The one interpreter every interpret-mode site of `entry` selects (None: none, or several), looking into a
    helper that picks it (`interpret=_interpret_mode()` returning `pltpu.InterpretParams()` off a TPU)."""
    from .kernel_model import site_interpreter

    found = set()
    for site in (*entry.interpret, *entry.maybe_interpret):
        interpreter = site_interpreter(project, entry, site)
        node = site.node.value if isinstance(site.node, ast.keyword) else site.node
        if interpreter == "hlo" and isinstance(node, ast.Call):
            interpreter = _helper_interpreter(project, site.model, node) or interpreter
        found.add(interpreter)
    return found.pop() if len(found) == 1 else None


def _helper_interpreter(project, model, call: ast.Call) -> str | None:
    func = project.evaluator.value(model, call.func)
    if not isinstance(func, Func) or not isinstance(func.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for ret in returns_in(func.node.body):
        options = [ret.value.body, ret.value.orelse] if isinstance(ret.value, ast.IfExp) else [ret.value]
        for option in options:
            value = project.evaluator.value(func.model, option) if option is not None else None
            if isinstance(value, InterpretParams):
                return "tpu" if value.name.startswith("pltpu.") else "gpu"
    return None
