"""Fix (PAL008): a value read out of a `plgpu.alloc_semaphore` ref, passed to a `plgpu.kernel`,
becomes the ref.

`sems[...]` and `jax.freeze(sems)` read every semaphore: `sems` passes the same ones as a ref, the
only way `plgpu.kernel` takes them. Only where the read is the operand itself or a name bound to it
once and used only there. For one semaphore read out, `sems[i]` (`i` a number or tuple of numbers): the ref of one, `sems.at[i]`,
is not an operand JAX takes (`TransformedRefs cannot be abstractified`, jax 0.12), so the whole ref is
passed and the body indexes it, `sem = sems.at[i]` first under the parameter's old name (the one the
message asks for; jax 0.12 lowers it). Only where the body is a plain function launched only there, by one
launch, with no `functools.partial` binding positional parameters.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import kernel_launches
from ..analysis.values import Api, Func, SemaphoreArray, SemaphoreRef
from .kernel_edits import CannotFix, FixBuilder, replace_expression, unique_name
from .sites import bound_before, launches


def _read(project, model, operand: ast.expr) -> ast.expr | None:
    """The expression that reads the ref: the operand, or the value of the name it is."""
    if not isinstance(operand, ast.Name):
        return operand
    binding = model.lookup(operand.id, model.scope_of(operand), operand.lineno)
    if binding is None or binding.kind != "assign" or not isinstance(binding.node, ast.Assign):
        return None
    scope = model.enclosing_function(operand) or model.tree
    loads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == operand.id]
    if len(loads) != 2:  # bound once, read once (here)
        return None
    return binding.value


def _whole_ref(project, model, node: ast.expr) -> bool:
    """A ref to every semaphore made, not a view (`sems.at[i]`: a TransformedRef, no operand JAX takes)."""
    return isinstance(project.evaluator.value(model, node), SemaphoreRef) and not any(
        isinstance(n, ast.Attribute) and n.attr == "at" for n in ast.walk(node))


def _as_ref(project, model, read: ast.expr) -> str | None:
    """The code for the ref `read` reads."""
    text = lambda node: ast.get_source_segment(model.text, node)  # noqa: E731
    if isinstance(read, ast.Subscript) and _whole_ref(project, model, read.value):
        if isinstance(read.slice, ast.Constant) and read.slice.value is Ellipsis:
            return text(read.value)
        return None  # `sems[i]`: `sems.at[i]` is not an operand JAX takes (a TransformedRef; jax 0.12)
    if isinstance(read, ast.Call) and len(read.args) == 1 and not read.keywords:
        callee = project.evaluator.value(model, read.func)
        if isinstance(callee, Api) and callee.name == "jax.freeze" and _whole_ref(project, model, read.args[0]):
            return text(read.args[0])
    return None


def fix(project, model, finding):
    operand, value = finding.facts.get("operand"), finding.facts.get("value")
    if operand is None or not isinstance(value, SemaphoreArray) or operand not in model.parents:
        return None
    read = _read(project, model, operand)
    code = _as_ref(project, model, read) if read is not None else None
    if code is None and read is not None and _one_semaphore(project, model, read):
        return _index_in_body(project, model, finding, operand, read)
    if code is None:
        raise CannotFix("where the ref is read is not known here")
    builder = FixBuilder(project)
    replace_expression(builder, model, read, code)
    return builder.fix(f"pallas-lsp ({finding.code}): Pass the semaphore ref: {code}", "safe", preferred=True)


def _one_semaphore(project, model, read: ast.expr) -> bool:
    """`sems[i]` of a whole ref, `i` a number or a tuple of numbers."""
    if not (isinstance(read, ast.Subscript) and _whole_ref(project, model, read.value)):
        return False
    index = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
    return bool(index) and all(isinstance(i, ast.Constant) and type(i.value) is int for i in index)


def _index_in_body(project, model, finding, operand: ast.expr, read: ast.Subscript):
    """`kernel(sems[i], ...)` -> `kernel(sems, ...)`, the body's parameter for it renamed and bound to
    `<ref>.at[i]` first."""
    call = finding.facts.get("launch")
    launch = next((l for l in kernel_launches(project, model) if l.call is call), None)
    body = launch.kernel.body if launch is not None else None
    if not isinstance(body, Func) or not isinstance(body.node, ast.FunctionDef) or bound_before(body) != 0:
        raise CannotFix("the kernel's body is not a plain function")
    function, body_model = body.node, body.model
    if [e.kernel.node for e in launches(project, body_model, function)] != [launch.kernel.node] or [
            l.call for l in kernel_launches(project, model) if l.kernel.node is launch.kernel.node] != [call]:
        raise CannotFix(f"{function.name} is not launched only here, so its parameter cannot become the whole ref")
    args = function.args
    position = call.args.index(operand) if operand in call.args else -1
    if position < 0 or args.posonlyargs or args.vararg or position >= len(args.args):
        raise CannotFix(f"which of {function.name}'s parameters takes the semaphore is not known")
    param = args.args[position].arg
    ref = ast.get_source_segment(model.text, read.value)
    ref_name = unique_name(body_model, function, ref if ref.isidentifier() else "sems")
    index = ast.get_source_segment(model.text, read.slice)
    builder = FixBuilder(project)
    replace_expression(builder, model, read, ref)
    file, _ = builder.file(body_model)
    definition = file.function(function)
    if definition is None or not isinstance(definition.body, cst.IndentedBlock):
        raise CannotFix(f"{function.name} was not found, or is on its def line")
    has_docstring = (isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant)
                     and isinstance(function.body[0].value.value, str))
    statement = cst.parse_statement(f"{param} = {ref_name}.at[{index}]\n")

    def change(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = list(updated.params.params)
        params[position] = params[position].with_changes(name=cst.Name(ref_name))
        lines = list(updated.body.body)
        lines.insert(1 if has_docstring else 0, statement)
        return updated.with_changes(params=updated.params.with_changes(params=params),
                                    body=updated.body.with_changes(body=lines))

    file.rewrite(definition, change)
    return builder.fix(f"pallas-lsp ({finding.code}): Pass the semaphore ref {ref}, and take {param} = "
                       f"{ref_name}.at[{index}] in {function.name}", "safe", preferred=True)
