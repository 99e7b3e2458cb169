"""Fix (PAL013): a TPU DMA semaphore that is only signalled and waited on is allocated REGULAR.

    scratch_shapes=[pltpu.SemaphoreType.DMA((2,))]   ->   scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))]

A DMA semaphore is what a copy signals; `pl.semaphore_signal` / `pl.semaphore_wait` take a REGULAR one
(jax 0.12: "Must signal semaphores of the following types"). Where the kernel starts no copy at all, the
semaphore takes part in no DMA, and the counting its signals and waits do is what a REGULAR semaphore of the
same shape does: that is the only meaning the code can have. Only for a scratch or `pl.run_scoped`
semaphore whose type is written at the allocation, or in a module constant read there alone: one of this
module, or one of another workspace module imported by name (`from kernel_h import SEM_TYPE`), which that
module reads nowhere and no other module imports. A constant another module imports from this one too is
left alone (it may allocate a DMA semaphore there for a copy).

In a Mosaic GPU kernel the REGULAR semaphore is Mosaic GPU's (`plgpu.SemaphoreType.REGULAR`): a TPU one
there is refused by the GPU lowering (jax 0.12: "Unsupported memory space: semaphore_mem").
"""

from __future__ import annotations

import ast
import os
import re

import libcst as cst

from ..analysis.classes import dataclass_fields
from ..analysis.comparisons import as_sequence
from ..analysis.gpu_interpreter import GPU_INTERPRETER_REFUSAL, gpu_interpreted
from ..analysis.kernel_model import MOSAIC_GPU, MOSAIC_GPU_WARP
from ..analysis.result_uses import _loads
from ..analysis.values import ClassValue, Func
from .kernel_edits import CannotFix, FixBuilder


def _dma_attribute(expr: ast.expr, kinds: tuple[str, ...] = ("DMA",)) -> ast.Attribute | None:
    """`X.SemaphoreType.DMA` in `expr` (`pltpu.SemaphoreType.DMA` or `...DMA((2,))`; or another of `kinds`)."""
    node = expr.func if isinstance(expr, ast.Call) else expr
    if (isinstance(node, ast.Attribute) and node.attr in kinds and isinstance(node.value, ast.Attribute)
            and node.value.attr == "SemaphoreType"):
        return node
    return None


def _type_expression(project, kernel, sem) -> ast.expr | None:
    """Where the semaphore's type is written: its scratch list's element, or its run_scoped argument."""
    match = re.fullmatch(r"(scratch_shapes|scratch_types)\[(\d+)\]", sem.origin)
    if match:
        call = kernel.entry.node
        if not isinstance(call, ast.Call) or kernel.entry.model is not sem.model:
            return None
        for keyword in call.keywords:
            if keyword.arg == match[1]:  # a display, or a helper (a config's method) returning one
                return _item_source(project, sem.model, keyword.value, int(match[2]), 0)
        return None
    if sem.origin != "pl.run_scoped":
        return None
    for call in ast.walk(sem.model.tree):
        if not (isinstance(call, ast.Call) and call.args and ast.unparse(call.func).endswith("run_scoped")):
            continue
        body = project.evaluator.value(sem.model, call.args[0])
        node = getattr(body, "node", None)
        if isinstance(node, ast.FunctionDef):
            params = [*node.args.posonlyargs, *node.args.args]
            if sem.node in params and params.index(sem.node) + 1 < len(call.args):
                return call.args[params.index(sem.node) + 1]
    return None


def _copies_signal_others(kernel, sem) -> bool:
    """Does every copy of the kernel signal semaphores known to be others than `sem` (each of its semaphore
    arguments is a use of another scratch, operand or run_scoped semaphore)? True where there is no copy."""
    others = {(id(use.descriptor), use.role or use.kind) for other in kernel.semaphores if other is not sem
              for use in other.uses if use.descriptor is not None}
    return all((id(copy.call), role) in others for copy in kernel.dma_copies for role, _, _ in copy.semaphores)


def _element(project, model, elements: list[ast.expr], index: int, depth: int = 0) -> ast.expr | None:
    """The expression that writes item `index` of a scratch list display: an element, or one a `*spread`
    gives, where the spread's items are written in this module (`*Sems.scratch()`, the classmethod returning
    `list(cls(copy=..., ready=...))` or a list display)."""
    for element in elements:
        if not isinstance(element, ast.Starred):
            if index == 0:
                return element
            index -= 1
            continue
        items = as_sequence(project.evaluator.value(model, element.value))
        if items is None or depth > 2:
            return None
        if index < len(items.items):
            return _item_source(project, model, element.value, index, depth + 1)
        index -= len(items.items)
    return None


def _item_source(project, model, expr: ast.expr, index: int, depth: int) -> ast.expr | None:
    """The expression writing item `index` of the sequence `expr` gives, followed through a function called
    once whose one statement returns it, `list(...)`/`tuple(...)`, a display and a NamedTuple's constructor."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        return _element(project, model, expr.elts, index, depth)
    if not isinstance(expr, ast.Call) or depth > 4:
        return None
    if isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple") and len(expr.args) == 1:
        return _item_source(project, model, expr.args[0], index, depth + 1)
    callee = project.evaluator.value(model, expr.func)
    if isinstance(callee, ClassValue):  # a NamedTuple's constructor: the field's argument
        names = [f.target.id for f in dataclass_fields(callee.node) or []]
        if index >= len(names) or any(isinstance(a, ast.Starred) for a in expr.args) or \
                any(k.arg is None for k in expr.keywords):
            return None
        if index < len(expr.args):
            return expr.args[index]
        return next((k.value for k in expr.keywords if k.arg == names[index]), None)
    if isinstance(callee, Func) and callee.model is model and isinstance(callee.node, ast.FunctionDef) \
            and len(callee.node.body) >= 1 and isinstance(callee.node.body[-1], ast.Return) \
            and sum(isinstance(n, ast.Return) for n in ast.walk(callee.node)) == 1 \
            and len(model.calls_named(callee.node.name)) == 1:  # a helper only this launch calls
        return _item_source(project, model, callee.node.body[-1].value, index, depth + 1)
    return None


def _written_here(project, model, expr: ast.expr, kinds: tuple[str, ...] = ("DMA",)):
    """(module, DMA attribute) of `expr`: itself, or the module constant it names when that constant is read
    only here, defined in this module or imported from another workspace module (`from m_h import SEM_TYPE`)
    where nothing else reads it. `kinds`: the SemaphoreType members looked for."""
    found = _dma_attribute(expr, kinds)
    if found is not None:
        return model, found
    if not isinstance(expr, ast.Name) or _loads(model, model.tree, expr.id) != [expr] or project.importers_mentioning(model, expr.id):
        return None
    binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
    if binding is None:
        return None
    if binding.kind == "import" and isinstance(binding.import_from, ast.ImportFrom):
        return _constant_of_other_module(project, model, binding, kinds)
    constant = _module_constant(model, binding)
    return (model, _dma_attribute(constant.value, kinds)) if constant is not None else None


def _constant_of_other_module(project, model, binding, kinds: tuple[str, ...] = ("DMA",)):
    """(module, DMA attribute) of the constant `from m import NAME` binds, where `m` is a workspace module that
    assigns NAME once at its top level and reads it nowhere, and no module but `model` imports it from `m`."""
    path = project.resolver.import_from_path(model, binding.import_from)
    name = binding.node.name
    if path is None or os.path.abspath(path) == model.path or not project.is_workspace_file(path):
        return None
    other = project.model(path)
    bindings = other.scopes[other.tree].bindings.get(name, [])
    constant = _module_constant(other, bindings[0]) if len(bindings) == 1 else None
    if constant is None or _loads(other, other.tree, name) or any(m.path != model.path for m in project.importers_mentioning(other, name)):
        return None
    found = _dma_attribute(constant.value, kinds)
    return (other, found) if found is not None else None


def _module_constant(model, binding) -> ast.Assign | None:
    """The `NAME = ...` statement at `model`'s top level that `binding` is, with one name as its target."""
    node = getattr(binding, "node", None)
    if binding.kind != "assign" or not isinstance(node, ast.Assign) or node not in model.tree.body:
        return None
    return node if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) else None


def fix(project, model, finding):
    facts = finding.facts
    kernel, node = facts.get("kernel"), facts.get("semaphore")
    if kernel is None or node is None or facts.get("dtype") != "dma_sem":
        return None
    sem = next((s for s in kernel.semaphores if s.node is node), None)
    if sem is None:
        return None
    if gpu_interpreted(project, kernel.entry):
        raise CannotFix(GPU_INTERPRETER_REFUSAL)
    if not _copies_signal_others(kernel, sem):
        raise CannotFix("the kernel makes DMA copies: which semaphore a copy signals is not checked here")
    if any(use.kind not in ("signal", "wait", "read") for use in sem.uses):
        raise CannotFix("the DMA semaphore is used for more than signal and wait")
    expr = _type_expression(project, kernel, sem)
    written = _written_here(project, sem.model, expr) if expr is not None else None
    repeated = _repeated(project, kernel, sem) if written is None else None
    if repeated is not None:
        return _spelled_out(project, sem.model, kernel, finding, *repeated)
    if written is None:
        raise CannotFix("the DMA semaphore's type is not written where it is allocated, in this module, nor in "
                        "a module constant read only there")
    where, target = written
    builder = FixBuilder(project)
    file, imports = builder.file(where)
    found = file.find_ast(where, target, cst.Attribute)
    if found is None:
        raise CannotFix("the semaphore's type was not found")
    if kernel.backend in (MOSAIC_GPU, MOSAIC_GPU_WARP):  # `plgpu.SemaphoreType.REGULAR`, not the TPU's
        regular = cst.parse_expression(f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.SemaphoreType.REGULAR")
        file.rewrite(found, lambda updated: regular)
    else:
        file.rewrite(found, lambda updated: updated.with_changes(attr=cst.Name("REGULAR")))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate a REGULAR semaphore (only signalled and waited on)",
                       "safe", preferred=True)


def _repeated(project, kernel, sem):
    """(`[T] * n`, its element, n, the semaphore's index) where the semaphore is one of a scratch list written
    as one DMA semaphore type repeated (`[pltpu.SemaphoreType.DMA] * NUM_SEMS`); None otherwise."""
    match = re.fullmatch(r"(scratch_shapes|scratch_types)\[(\d+)\]", sem.origin)
    call = kernel.entry.node
    if not match or not isinstance(call, ast.Call) or kernel.entry.model is not sem.model:
        return None
    value = next((k.value for k in call.keywords if k.arg == match[1]), None)
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        return None
    shown, times = (value.left, value.right) if isinstance(value.left, (ast.List, ast.Tuple)) else (value.right, value.left)
    count = project.evaluator.value(sem.model, times)
    if not (isinstance(shown, (ast.List, ast.Tuple)) and len(shown.elts) == 1 and _dma_attribute(shown.elts[0])
            and type(getattr(count, "value", None)) is int and int(match[2]) < count.value <= 6):
        return None
    return value, shown, count.value, int(match[2])


def _spelled_out(project, model, kernel, finding, repeated: ast.BinOp, shown, count: int, index: int):
    """`[DMA] * 3` -> `[DMA, DMA, REGULAR]`: the list written out, the semaphore's item made REGULAR."""
    if kernel.backend in (MOSAIC_GPU, MOSAIC_GPU_WARP):
        raise CannotFix("a TPU DMA semaphore type repeated in a Mosaic GPU kernel's scratch")
    element = ast.get_source_segment(model.text, shown.elts[0])
    attribute = _dma_attribute(shown.elts[0])
    cut = len(ast.get_source_segment(model.text, attribute))
    regular = element[:cut - len("DMA")] + "REGULAR" + element[cut:]
    items = ", ".join(regular if i == index else element for i in range(count))
    written = f"[{items}]" if isinstance(shown, ast.List) else f"({items}{',' if count == 1 else ''})"
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    found = file.find_ast(model, repeated, cst.BinaryOperation)
    if found is None:
        raise CannotFix("the scratch list was not found")
    file.rewrite(found, lambda updated: cst.parse_expression(written))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate a REGULAR semaphore (only signalled and waited on)",
                       "safe", preferred=True)
