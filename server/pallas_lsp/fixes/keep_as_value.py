"""Fix: a buffer a Triton kernel only uses to park an intermediate becomes a value of the body.

    def body(x_ref, o_ref):                                         def body(x_ref, o_ref):
        tmp = pl.get_global(plgpu.GMEM((8, 128), jnp.float32))  ->       tmp = x_ref[...] * 2.0
        tmp[...] = x_ref[...] * 2.0                                     o_ref[...] = tmp + 1.0
        o_ref[...] = tmp[...] + 1.0

Triton lowers neither get_global nor scratch (jax 0.12: 'Unimplemented primitive in Pallas Triton lowering:
get_global', 'scratch memory not implemented in the Triton backend'); a whole-buffer write read back whole is a
value. Only where every use of the name is `name[...] = v`, `name[...] += v` (statements of the body itself, the
first use a plain write) or a read `name[...]`, and every launch reaching it is a compiled Triton one. Unsafe: the
value keeps the dtype and shape of what is written, where the buffer would cast and broadcast it.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import TRITON, compiled_backend
from ..analysis.values import MemType
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder, remove_statement
from .sites import locate

_NOT_ARRAYS = {"semaphore", "barrier_semaphore", "dma_sem", "barrier", "cluster_barrier"}


def _whole(node: ast.AST, name: str) -> bool:
    """`name[...]`."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name
            and isinstance(node.slice, ast.Constant) and node.slice.value is Ellipsis)


def _uses(function: ast.FunctionDef, statement: ast.stmt, name: str):
    """(writes, reads) of the buffer after its get_global statement: the statements `name[...] = v` /
    `name[...] += v` of the body itself, and the `name[...]` reads; CannotFix for any other use."""
    writes, reads, whole_targets = [], [], set()
    for stmt in function.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _whole(stmt.targets[0], name):
            writes.append(stmt)
            whole_targets.add(id(stmt.targets[0]))
        elif isinstance(stmt, ast.AugAssign) and _whole(stmt.target, name):
            writes.append(stmt)
            whole_targets.add(id(stmt.target))
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and id(node) in whole_targets:
            continue
        if isinstance(node, ast.Subscript) and _whole(node, name) and isinstance(node.ctx, ast.Load):
            reads.append(node)
    named = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name]
    covered = {id(n.value) for n in reads} | {id(t.value) for s in writes
                                              for t in [s.targets[0] if isinstance(s, ast.Assign) else s.target]}
    if any(id(n) not in covered for n in named if not (isinstance(n.ctx, ast.Store) and n in _targets(statement))):
        raise CannotFix(f"{name} is used other than written whole (`{name}[...] = v`) and read whole (`{name}[...]`)")
    if not writes or not isinstance(writes[0], ast.Assign) or writes[0].lineno <= statement.lineno \
            or any(r.lineno < writes[0].lineno or r.lineno <= statement.lineno for r in reads):
        raise CannotFix(f"{name} is read before it is written whole")
    return writes, reads


def _targets(statement: ast.stmt) -> list[ast.AST]:
    return [n for target in getattr(statement, "targets", []) for n in ast.walk(target)]


def fix(project, model, call, value, code: str):
    if code not in ("PAL001", "PAL003") or not isinstance(value, MemType) or value.dtype in _NOT_ARRAYS:
        return None
    located = locate(project, model, call)
    if located is None:
        return None
    use, where, entries = located
    if not entries or where.helper is not None or where.siblings or use.statement is None or use.name is None \
            or use.lambda_statement is not None or use.statement not in use.function.body:
        return None
    if any(e.api != "pl.pallas_call" or e.interpret or e.maybe_interpret or compiled_backend(project, e) != TRITON
           for e in entries):
        return None  # Mosaic GPU and TPU take scratch, which keeps the buffer's dtype and shape
    name = use.name
    writes, reads = _uses(use.function, use.statement, name)
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    for node in reads:
        found = file.find_ast(model, node, cst.Subscript)
        if found is None:
            raise CannotFix(f"a read of {name} was not found")
        file.rewrite(found, lambda updated: cst.Name(name).with_changes(lpar=updated.lpar, rpar=updated.rpar))
    for statement in writes:
        target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
        found = file.find_ast(model, target, cst.Subscript)
        if found is None:
            raise CannotFix(f"a write of {name} was not found")
        file.rewrite(found, lambda updated: expression(name))
    remove_statement(builder, model, use.statement)
    return builder.fix(f"pallas-lsp ({code}): Keep {name} as a value in the body (Triton has no get_global and no "
                       "scratch) (unsafe: the value keeps the dtype and shape of what is written, where the buffer "
                       "would cast and broadcast it)", "unsafe")
