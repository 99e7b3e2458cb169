"""Fix (PAL027): a `jax.ShapeDtypeStruct` asked for as scratch becomes the backend's buffer of its shape and dtype.

    def _accumulator_shape(cfg, dtype):                def _accumulator_shape(cfg, dtype):
      block = jax.ShapeDtypeStruct(...)                  block = jax.ShapeDtypeStruct(...)
      return jax.eval_shape(_block_partial, block)  ->   partial = jax.eval_shape(_block_partial, block)
                                                         return pltpu.VMEM(partial.shape, partial.dtype)

Written where the struct is made, so it holds for every configuration: followed from the scratch element (or
run_scoped argument) through a helper's `return` and a name's assignment (each used once). A `jax.ShapeDtypeStruct(shape, dtype)`
call becomes `pltpu.VMEM(shape, dtype)` (`plgpu.SMEM` for Mosaic GPU); a returned `jax.eval_shape(...)` is named
and its `.shape` and `.dtype` given to the buffer; a name (read twice, harmlessly) is wrapped where it is used.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.returns import returns_in
from ..analysis.values import Api, Func
from ..rules.pal027_scratch_shape_dtype_struct import buffer_type
from .kernel_edits import CannotFix, FixBuilder
from .type_definition import _used_once

_MODULES = {"pltpu": "jax.experimental.pallas.tpu", "plgpu": "jax.experimental.pallas.mosaic_gpu"}
_STRUCT_NAME = "struct"


def fix(project, model, finding):
    kernel, placement = finding.facts.get("kernel"), finding.facts.get("placement")
    if kernel is None or placement is None or placement.model is not model:
        return None
    written = buffer_type(kernel)
    if written is None:
        raise CannotFix("the kernel's backend, whose buffer type the struct would become, is not known")
    builder = FixBuilder(project)
    where, expr = _made_at(project, model, placement.use)
    file, imports = builder.file(where)
    space = f"{imports.name(_MODULES[written.split('.')[0]])}.{written.split('.')[1]}"
    target = file.find_ast(where, expr, cst.BaseExpression)
    if target is None:
        raise CannotFix("the struct's expression was not found")
    if isinstance(expr, ast.Call) and _api(project, where, expr.func) == "jax.ShapeDtypeStruct":
        if {k.arg for k in expr.keywords} - {"shape", "dtype"} or len(expr.args) > 2:
            raise CannotFix("the jax.ShapeDtypeStruct is given more than its shape and dtype (a sharding)")
        file.rewrite(target, lambda updated: updated.with_changes(func=cst.parse_expression(space)))
    elif isinstance(expr, (ast.Name, ast.Attribute)):
        text = where.source_segment(expr)
        file.rewrite(target, lambda updated: cst.parse_expression(f"{space}({text}.shape, {text}.dtype)"))
    elif isinstance(expr, ast.Call) and _returned(where, expr) is not None:
        _name_returned(file, where, _returned(where, expr), space)
    else:
        raise CannotFix("the struct is made inside an expression the buffer type cannot be written around")
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for a {written} of the struct's shape and dtype",
                       "safe", preferred=True)


def _made_at(project, model, expr: ast.expr, depth: int = 0) -> tuple:
    """(model, expression) where the struct is made: through the `return` of a helper used once."""
    if depth < 4 and isinstance(expr, ast.Call):
        callee = project.evaluator.value(model, expr.func)
        if isinstance(callee, Func) and isinstance(callee.node, ast.FunctionDef) and \
                _used_once(project, callee.model, callee.node.name):
            returns = [r for r in returns_in(callee.node.body) if r.value is not None]
            if len(returns) == 1:
                return _made_at(project, callee.model, returns[0].value, depth + 1)
    if depth < 4 and isinstance(expr, ast.Name) and _used_once(project, model, expr.id):  # `STAGE = jax.Shape...`
        binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
        if binding is not None and binding.kind == "assign" and isinstance(binding.node, ast.Assign) and \
                len(binding.node.targets) == 1 and isinstance(binding.value, ast.Call):
            return _made_at(project, model, binding.value, depth + 1)
    return model, expr


def _api(project, model, expr: ast.expr) -> str | None:
    value = project.evaluator.value(model, expr)
    return value.name if isinstance(value, Api) else None


def _returned(model, expr: ast.expr) -> ast.Return | None:
    parent = model.parents.get(expr)
    return parent if isinstance(parent, ast.Return) else None


def _name_returned(file, model, statement: ast.Return, space: str) -> None:
    """`return jax.eval_shape(...)` -> `struct = jax.eval_shape(...)` and `return space(struct.shape, ...)`."""
    scope = model.scope_of(statement)
    if model.lookup(_STRUCT_NAME, scope, statement.lineno) is not None or _STRUCT_NAME in {
            n.id for n in ast.walk(scope) if isinstance(n, ast.Name)}:
        raise CannotFix(f"the name {_STRUCT_NAME} is taken in the helper")
    line = file.find_ast(model, statement, cst.SimpleStatementLine)
    if line is None or len(line.body) != 1:
        raise CannotFix("the return shares its line")
    made = model.source_segment(statement.value)

    def split(updated: cst.SimpleStatementLine):
        assign = cst.parse_statement(f"{_STRUCT_NAME} = {made}\n")
        result = cst.parse_statement(f"return {space}({_STRUCT_NAME}.shape, {_STRUCT_NAME}.dtype)\n")
        return cst.FlattenSentinel([assign.with_changes(leading_lines=updated.leading_lines), result])

    file.rewrite(line, split)
