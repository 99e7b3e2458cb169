"""Fix (PAL008): a semaphore output that the caller unpacks and hands to another kernel becomes a semaphore the
caller allocates with `plgpu.alloc_semaphore` and passes to both kernels.

    y, flags = plgpu.kernel(produce, out_type=(Y, SEM))(x)      flags = plgpu.alloc_semaphore()
    z = plgpu.kernel(consume, out_type=Z)(y, flags)        ->   y = plgpu.kernel(produce, out_type=Y)(x, flags)
                                                                z = plgpu.kernel(consume, out_type=Z)(y, flags)
    def produce(x_ref, y_ref, flags_ref): ...                   def produce(x_ref, flags_ref, y_ref): ...

A kernel returns no semaphore (jax 0.12: 'Kernels cannot return semaphores ... or via plgpu.alloc_semaphore
before the kernels that use them'); `plgpu.alloc_semaphore()` (jax 0.12 and later) is the semaphore that
outlives one kernel, zero-initialised as the output was, and the consumer already takes it as an operand. The
producer's semaphore parameter moves from its outputs to the end of its inputs. Only where the launch is
called right where its results are unpacked into names (`a, b = plgpu.kernel(...)(...)`), the semaphore is
the last output of a literal `out_type` with no scratch, the body is a plain function launched only there,
and the unpacked semaphore is only passed to other kernel launches. The caller's other results keep their
names (`y, flags = ...` becomes `y = ...`), so every other reader of them still fits.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.jax_version import jax_version
from ..analysis.launches import kernel_launches
from ..analysis.values import MemType
from .kernel_edits import CannotFix, FixBuilder
from .pass_as_input import tuple_code
from .semaphore_out_of_out_type import _scratch_count, _without_last
from .sites import bound_before, launches

ALLOC_SEMAPHORE_SINCE = (0, 12)


def _unpacked(model, entry) -> tuple[ast.Call, ast.Assign] | None:
    """(the launch call, the assignment unpacking its results into names) where the kernel is built and called
    in one expression that is the whole value of a tuple assignment."""
    launch = model.parents.get(entry.node)
    statement = model.parents.get(launch)
    if not (isinstance(launch, ast.Call) and launch.func is entry.node and isinstance(statement, ast.Assign)
            and statement.value is launch and len(statement.targets) == 1
            and isinstance(statement.targets[0], (ast.Tuple, ast.List))
            and all(isinstance(t, ast.Name) for t in statement.targets[0].elts)):
        return None
    return launch, statement


def fix(project, model, finding):
    entry, out_type = finding.facts.get("entry"), finding.facts.get("out_type")
    if entry is None or entry.api != "plgpu.kernel" or entry.model is not model:
        return None
    found = _unpacked(model, entry)
    if found is None or not isinstance(out_type, (ast.Tuple, ast.List)) or len(out_type.elts) < 2:
        return None
    launch, statement = found
    targets = statement.targets[0].elts
    leaf = out_type.elts[-1]
    if model.source.span(leaf) != finding.span or len(targets) != len(out_type.elts):
        return None
    memtype = as_memtype(project.evaluator.value(model, leaf))
    if not (isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore):
        return None
    version = jax_version(project)
    if version is not None and version < ALLOC_SEMAPHORE_SINCE:
        raise CannotFix(f"jax {'.'.join(map(str, version))} has no plgpu.alloc_semaphore")
    name = targets[-1].id
    host = model.enclosing_function(statement)
    scope = host if host is not None else model.tree
    mentions = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in mentions if isinstance(n.ctx, ast.Load)]
    launched = {id(other.call) for other in kernel_launches(project, model) if other.call is not launch}
    if len(mentions) - len(loads) != 1 or not loads or not all(
            isinstance(model.parents.get(n), ast.Call) and id(model.parents.get(n)) in launched
            and n in model.parents.get(n).args for n in loads):
        return None  # not only handed to other kernels: semaphore_out_of_out_type's cases, or none
    body = entry.body
    function = body.node if body is not None and getattr(body, "model", None) is model else None
    if not isinstance(function, ast.FunctionDef) or [
            e.node for e in launches(project, model, function)] != [entry.node]:
        raise CannotFix("the body is not a plain function launched only here")
    if _scratch_count(entry) != 0 or any(k.arg is None for k in entry.node.keywords):
        raise CannotFix("with scratch, the semaphore's parameter is not the body's last")
    args = function.args
    inputs = bound_before(entry.kernel.body) + len(launch.args)
    if args.posonlyargs or args.vararg or args.kwarg or args.defaults or launch.keywords or any(
            isinstance(a, ast.Starred) for a in launch.args) or len(args.args) != inputs + len(out_type.elts):
        raise CannotFix(f"which of {function.name}'s parameters take the inputs and outputs is not known")
    position = len(args.args) - 1
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    definition = file.function(function)
    sequence = file.find_ast(model, out_type, (cst.Tuple, cst.List))
    line = file.find_ast(model, statement, cst.SimpleStatementLine)
    if definition is None or sequence is None or line is None or len(line.body) != 1:
        raise CannotFix("the body, out_type or the unpacking was not found")
    plgpu = imports.name("jax.experimental.pallas.mosaic_gpu")
    shape = f"({tuple_code(memtype.shape)})" if memtype.shape else "()"
    allocate = cst.parse_statement(f"{name} = {plgpu}.alloc_semaphore{shape}\n")
    kept_targets = ", ".join(t.id for t in targets[:-1])
    shift = len(ast.get_source_segment(model.text, statement.targets[0])) - len(kept_targets)

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = list(updated.params.params)
        moved = params[position].with_changes(comma=params[inputs].comma)
        params = _without_last(params)
        params.insert(inputs, moved)
        return updated.with_changes(params=updated.params.with_changes(params=params))

    def change_out_type(updated):
        elements = _without_last(list(updated.elements))
        if len(elements) == 1:
            return elements[0].value.with_changes(lpar=[], rpar=[])
        return updated.with_changes(elements=elements)

    def change_line(updated: cst.SimpleStatementLine):
        assign = updated.body[0]
        kept = _without_last(list(assign.targets[0].target.elements))
        target = kept[0].value if len(kept) == 1 else assign.targets[0].target.with_changes(elements=kept)
        call = assign.value
        arguments = list(call.args)
        if arguments:
            arguments[-1] = arguments[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        call = call.with_changes(args=[*arguments, cst.Arg(cst.Name(name))])
        new = assign.with_changes(targets=[assign.targets[0].with_changes(target=target)], value=call)
        new = new.visit(_Dedent(shift, statement.col_offset))  # lines aligned to a bracket follow it
        return cst.FlattenSentinel([allocate.with_changes(leading_lines=updated.leading_lines),
                                    updated.with_changes(body=[new], leading_lines=[])])

    file.rewrite(definition, change_body)
    file.rewrite(sequence, change_out_type)
    file.rewrite(line, change_line)
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate {name} with plgpu.alloc_semaphore before the launch "
                       f"and pass it in, not as an output of {function.name}", "safe", preferred=True)


class _Dedent(cst.CSTTransformer):
    """Continuation lines aligned to a bracket of the statement move left by `shift` columns with it (those
    at most one indent deeper than the statement, a hanging indent, stay)."""

    def __init__(self, shift: int, column: int):
        super().__init__()
        self.shift, self.column = shift, column

    def leave_ParenthesizedWhitespace(self, original, updated):
        value = updated.last_line.value
        if self.shift > 0 and len(value) - self.shift > self.column + 4 and value[:self.shift].isspace():
            return updated.with_changes(last_line=cst.SimpleWhitespace(value[self.shift:]))
        return updated
