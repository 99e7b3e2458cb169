"""Fix: a `get_global` written as the default of a launched body's last parameter becomes that parameter's scratch.

    def body(x_ref, o_ref,                                     def body(x_ref, o_ref, stage):
             stage=pl.get_global(plgpu.SMEM((n,), f32))):  ->      ...
        ...                                                    plgpu.kernel(body, ..., scratch_types=[plgpu.SMEM((n,), f32)])
    plgpu.kernel(body, ...)

A default is evaluated where the `def` runs, in the launcher, outside the kernel (jax 0.12 compiling for cuda:
`TypeError: No ir_type_handler for aval type: AbstractRef`); the author meant a buffer of the kernel, which the
launch's scratch gives: JAX passes it after the operands and outputs, that is to the body's last parameter. Only
where that parameter is the body's last positional one (no `*refs`), not bound by a partial, and every launch of
the body takes scratch (`single_body_launches`); the type is written at the launch as it was (`_movable_type`).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..analysis.values import MemType
from .allocate_as_scratch import _movable_type
from .kernel_edits import CannotFix, FixBuilder, edit_sequence_keyword
from .sites import is_call_form, keyword_bound, single_body_launches

_SEMAPHORE_SPACES = {"semaphore_mem", "semaphore"}


def is_semaphore(value) -> bool:
    """A semaphore type, which a launch's scratch does not hold alike (per core, not shared by the grid)."""
    return getattr(value, "space", None) in _SEMAPHORE_SPACES or "Semaphore" in getattr(value, "constructor", "")


def defaulted_parameter(model, call: ast.Call) -> tuple[ast.FunctionDef, ast.arg] | None:
    """(the function, its parameter) where `call` is the default of the function's last positional parameter."""
    arguments = model.parents.get(call)
    function = model.parents.get(arguments)
    if not isinstance(arguments, ast.arguments) or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [*arguments.posonlyargs, *arguments.args]
    if not arguments.defaults or arguments.defaults[-1] is not call or not positional:
        return None
    return function, positional[-1]


def fix(project, model, call: ast.Call, value, code: str):
    found = defaulted_parameter(model, call)
    if found is None:
        return None
    function, parameter = found
    if function.args.vararg is not None:
        raise CannotFix(f"{function.name} takes *{function.args.vararg.arg}, after which JAX's scratch ref would land")
    if not isinstance(value, MemType) or is_semaphore(value):
        raise CannotFix("the default is no buffer a launch's scratch holds alike")
    entries = single_body_launches(project, model, function)
    if not entries:
        raise CannotFix(f"no kernel launch takes {function.name} as its body")
    for entry in entries:
        keyword = SCRATCH_KEYWORDS.get(entry.api)
        if keyword is None or not keyword.mosaic_gpu_lowers and entry.api != "pl.pallas_call":
            raise CannotFix(f"{entry.api} takes no scratch this way")
        if not is_call_form(entry) or parameter.arg in keyword_bound(entry.kernel.body):
            raise CannotFix("a launch binds the parameter, or builds the kernel where its scratch is not written")
    builder = FixBuilder(project)
    type_code = _movable_type(model, call, value, builder, entries)
    file, _ = builder.file(model)
    target = file.function(function)
    if target is None:
        raise CannotFix(f"{function.name} was not found")

    def undefaulted(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = list(updated.params.params)
        if not params or params[-1].name.value != parameter.arg or params[-1].default is None:
            raise CannotFix(f"the parameter {parameter.arg} was not found")
        params[-1] = params[-1].with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(params=updated.params.with_changes(params=params))

    file.rewrite(target, undefaulted)
    keyword_name = SCRATCH_KEYWORDS[entries[0].api].keyword
    for entry in entries:
        edit_sequence_keyword(builder, entry, SCRATCH_KEYWORDS[entry.api].keyword, type_code, first=False,
                              add_if_missing=True)
    return builder.fix(f"pallas-lsp ({code}): Allocate {parameter.arg}, the default of {function.name}'s last "
                       f"parameter, as scratch ({keyword_name})", "safe", preferred=True)
