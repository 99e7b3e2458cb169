"""Fix (PAL008): a semaphore in the `out_type` of a `plgpu.kernel` (or a `pl.kernel` on a
`plgpu.Mesh`) becomes a `pl.get_global` in the body.

    def body(x_ref, o_ref, sem_ref):          def body(x_ref, o_ref):
        pl.semaphore_signal(sem_ref)   ->         sem_ref = pl.get_global(plgpu.SemaphoreType.REGULAR)
                                                  pl.semaphore_signal(sem_ref)
    plgpu.kernel(body, out_type=(X, SEM))     plgpu.kernel(body, out_type=(X,))

An output is one buffer every block of the grid sees, zero-initialised is what a kernel that only
signals and waits on it can rely on: a global semaphore is exactly that, and the body keeps its
name for it. Unsafe: the kernel returns one output fewer. Not offered where a caller found in the module
or its importers would notice (unpacks the results, hands them on, reads the semaphore: see `result_uses`).
Only where the semaphore is the last output
of a literal `out_type` tuple or list, there is no scratch (so it was the body's last parameter),
and the body is a plain function launched only here
(keyword-only parameters, which a `functools.partial` may bind, stay; so do defaulted ones, where it is known
which parameter JAX gives the output: `_last_output_position`).

A semaphore output the body never uses (its parameter is read nowhere) is dropped instead, with its
parameter, on any backend (a `pallas_call`'s `out_shape` too): nothing in the kernel needed it. Unsafe
for the same reason (one output fewer).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.kernel_args import kernel_parameters, partial_bindings
from ..analysis.kernel_model import MOSAIC_GPU
from ..analysis.values import MemType
from .kernel_edits import CannotFix, FixBuilder
from .result_uses import dropping_breaks_a_caller
from .sites import launches

_MOSAIC_GPU_LAUNCHES = ("plgpu.kernel", "pl.kernel")


def _without_last(items: list) -> list:
    """`items` minus its last, the new last keeping the old last's trailing comma (or none)."""
    kept = items[:-1]
    kept[-1] = kept[-1].with_changes(comma=items[-1].comma)
    return kept


def _without(items: list, position: int) -> list:
    """`items` minus the one at `position` (the last keeps its trailing comma or none)."""
    return _without_last(items) if position == len(items) - 1 else [*items[:position], *items[position + 1:]]


def _scratch_count(entry) -> int | None:
    """How many scratch parameters end the body: a literal list or tuple's length, 0 without scratch
    (None: not known, or keyword-only ones from a dict)."""
    found = [entry.kernel.kwarg(k) for k in ("scratch_types", "scratch_shapes", "grid_spec")]
    found = [f for f in found if f is not None]
    if not found:
        return 0
    node = found[0][1]
    if len(found) == 1 and isinstance(node, (ast.List, ast.Tuple)) and not any(
            isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    return None


def fix(project, model, finding):
    entry, out_type, kernel = (finding.facts.get(key) for key in ("entry", "out_type", "kernel"))
    if entry is None or entry.api not in (*_MOSAIC_GPU_LAUNCHES, "pl.pallas_call") or entry.model is not model or kernel is None:
        return None
    body = entry.body
    function = body.node if body is not None and getattr(body, "model", None) is model else None
    scratch = _scratch_count(entry)
    position = _last_output_position(project, entry, function, out_type, scratch)
    unused = position >= 0 and _parameter_unused(function, position)
    if not unused and (entry.api not in _MOSAIC_GPU_LAUNCHES or kernel.backend != MOSAIC_GPU):
        return None  # a pl.kernel on another mesh, a pallas_call: no global semaphore there
    outputs = "out_shape" if entry.api == "pl.pallas_call" else "out_type"
    if not isinstance(out_type, (ast.Tuple, ast.List)) or len(out_type.elts) < 2:
        raise CannotFix(f"{outputs} is not a literal tuple or list of several outputs")
    leaf = out_type.elts[-1]
    if model.source.span(leaf) != finding.span:
        raise CannotFix("the semaphore is not the last output")
    memtype = as_memtype(project.evaluator.value(model, leaf))
    if not unused and not (isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore):
        raise CannotFix("only a Mosaic GPU semaphore type can be a global semaphore")
    if scratch is None or any(k.arg is None for k in entry.node.keywords):
        raise CannotFix("which of the body's parameters is the semaphore's is not known (scratch not a literal list)")
    if scratch and not unused:
        raise CannotFix("with scratch, the semaphore's parameter is not the body's last")
    # By launch call: the finding's EntryPoint may come from an index an overlay's change rebuilt since.
    if not isinstance(function, ast.FunctionDef) or [e.node for e in launches(project, model, function)] != [entry.node]:
        raise CannotFix("the body is not a plain function launched only here")
    args = function.args
    if args.posonlyargs or args.vararg or args.kwarg or position < 1:
        raise CannotFix(f"{function.name} takes more than plain parameters")
    if not partial_bindings(entry.kernel.body)[1] <= {a.arg for a in args.kwonlyargs}:
        raise CannotFix(f"a functools.partial binds one of {function.name}'s positional parameters by name")
    name = args.args[position].arg
    broken = dropping_breaks_a_caller(project, entry, len(out_type.elts) - 1, len(out_type.elts))
    if broken is not None:
        raise CannotFix(broken)
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    definition = file.function(function)
    sequence = file.find_ast(model, out_type, (cst.Tuple, cst.List))
    if definition is None or sequence is None or len(sequence.elements) != len(out_type.elts):
        raise CannotFix("the body or out_type was not found")
    semaphore = ast.get_source_segment(model.text, leaf)
    allocate = None if unused else cst.parse_statement(  # a dropped output needs no `pl` import
        f"{name} = {imports.name('jax.experimental.pallas')}.get_global({semaphore})\n")
    has_docstring = (isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant)
                     and isinstance(function.body[0].value.value, str))

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = updated.params.with_changes(params=_without(list(updated.params.params), position))
        if unused:
            return updated.with_changes(params=params)
        if not isinstance(updated.body, cst.IndentedBlock):
            raise CannotFix("the body is on the def line")
        lines = list(updated.body.body)
        lines.insert(1 if has_docstring else 0, allocate)
        return updated.with_changes(params=params, body=updated.body.with_changes(body=lines))

    def change_out_type(updated):
        elements = _without_last(list(updated.elements))
        if isinstance(updated, cst.Tuple) and len(elements) == 1 and not isinstance(elements[0].comma, cst.Comma):
            elements[0] = elements[0].with_changes(comma=cst.Comma())
        return updated.with_changes(elements=elements)

    file.rewrite(definition, change_body)
    file.rewrite(sequence, change_out_type)
    if unused:
        return builder.fix(f"pallas-lsp ({finding.code}): Drop the semaphore output {name}, which the body does not use",
                           "unsafe")
    return builder.fix(f"pallas-lsp ({finding.code}): Make {name} a global semaphore (pl.get_global in the body), "
                       "not an output", "unsafe")


def _last_output_position(project, entry, function, out_type, scratch: int | None) -> int:
    """Which of `function.args.args` JAX gives the last output (-1: not known). Without defaults, the last but
    the scratch. With defaults, where the launch's operands are known, the parameter `kernel_parameters` places
    it in; else only where no defaulted parameter defaults to None (`mean_ref=None` may take a ref): a default
    that is a value (a type, a size) is one no caller overrides with a ref, so JAX fills the parameters
    without default."""
    if not isinstance(function, ast.FunctionDef) or scratch is None or not isinstance(out_type, (ast.Tuple, ast.List)):
        return -1
    args = function.args
    if not args.defaults:
        return len(args.args) - 1 - scratch
    last = f"[{len(out_type.elts) - 1}]"
    for param in kernel_parameters(project, entry):
        if param.role == "output" and param.origin.endswith(last) and param.node in args.args:
            return args.args.index(param.node)
    if any(isinstance(d, ast.Constant) and d.value is None for d in args.defaults):
        return -1
    return len(args.args) - len(args.defaults) - 1 - scratch


def _parameter_unused(function: ast.FunctionDef, position: int) -> bool:
    """The body's positional parameter at `position` is named nowhere in it (nested functions included)."""
    param = function.args.args[position]
    return not any(isinstance(node, ast.Name) and node.id == param.arg for node in ast.walk(function)) and not any(
        isinstance(node, ast.arg) and node.arg == param.arg and node is not param for node in ast.walk(function))
