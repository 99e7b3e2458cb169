"""Fix (PAL013): an integer operand the body signals and waits on as a counter becomes a global semaphore.

    def body(x_ref, count_ref, o_ref):               def body(x_ref, o_ref):
        pl.semaphore_signal(count_ref, 1)                count_ref = pl.get_global(plgpu.SemaphoreType.REGULAR)
                                               ->        pl.semaphore_signal(count_ref, 1)
    count = jnp.zeros((), jnp.int32)
    plgpu.kernel(body, ...)(x, count)                plgpu.kernel(body, ...)(x)

An array is no semaphore (jax 0.12: "Must signal semaphores of the following types: {...}. Got int32."); a
zero-valued integer the launcher makes for the blocks to count on is what a Mosaic GPU global semaphore is,
and a kernel asks for one itself (`pl.get_global`, which starts at zero like the array). Only for a scalar
integer operand of a compiled Mosaic GPU launch, used in the body only by signal, wait and read, passed by
one launch of this module as a plain positional argument; the launcher's own name for it goes where nothing
else reads it.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import MOSAIC_GPU, kernel_launches
from ..analysis.result_uses import _loads
from .kernel_edits import CannotFix, FixBuilder, remove_statement, without_argument

_INTEGERS = ("int32", "uint32", "int64", "int8", "uint8")


def fix(project, model, finding):
    facts = finding.facts
    kernel, node = facts.get("kernel"), facts.get("operand")
    if kernel is None or node is None or facts.get("dtype") not in _INTEGERS:
        return None
    if kernel.backend != MOSAIC_GPU or kernel.entry.interpret or kernel.entry.api not in ("plgpu.kernel", "pl.kernel"):
        raise CannotFix("only a compiled Mosaic GPU kernel has a global semaphore")
    from ..analysis.kernel_args import kernel_parameters

    param = next((p for p in kernel_parameters(project, kernel.entry) if p.node is node), None)
    body = kernel.entry.body
    if param is None or param.shape != () or not param.origin.startswith("operand ") or body.model is not model:
        raise CannotFix("not a scalar operand of a body of this module")
    from ..analysis.result_uses import parameter_uses

    if any(use.kind not in ("signal", "wait", "read") for use in parameter_uses(project, body, node)):
        raise CannotFix("the operand is used as an array too")
    index = int(param.origin.split()[1])
    runs = [launch for source in [model, *project.importers(model)] for launch in kernel_launches(project, source)
            if launch.kernel.node is kernel.entry.kernel.node]
    if len(runs) != 1 or runs[0].model is not model:
        raise CannotFix("the kernel is launched at more than one place, or in another module")
    launch = runs[0].call
    if any(isinstance(a, ast.Starred) for a in launch.args) or index >= len(launch.args) or launch.keywords:
        raise CannotFix("which argument of the launch is the operand is not known")
    function = body.node
    spec = function.args
    positional = [*spec.posonlyargs, *spec.args]
    if spec.vararg is not None or node not in positional or spec.defaults:
        raise CannotFix("the body's parameters are not plain positional ones")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    definition, target = file.function(function), file.find_ast(model, launch, cst.Call)
    if definition is None or target is None or not isinstance(definition.body, cst.IndentedBlock):
        raise CannotFix("the body or the launch was not found")
    allocate = cst.parse_statement(f"{node.arg} = {imports.name('jax.experimental.pallas')}.get_global("
                                   f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.SemaphoreType.REGULAR)\n")
    docstring = isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant) \
        and isinstance(function.body[0].value.value, str)
    position = positional.index(node)

    def change_body(updated: cst.FunctionDef) -> cst.FunctionDef:
        lines = list(updated.body.body)
        lines.insert(1 if docstring else 0, allocate)
        params = list(updated.params.params)
        removed = params.pop(position)
        if position == len(params) and params:
            params[-1] = params[-1].with_changes(comma=removed.comma)
        return updated.with_changes(params=updated.params.with_changes(params=params),
                                    body=updated.body.with_changes(body=lines))

    file.rewrite(definition, change_body)
    file.rewrite(target, lambda updated: without_argument(updated, index))
    made = _made_only_for(model, launch, launch.args[index])
    if made is not None:
        remove_statement(builder, model, made)
    return builder.fix(f"pallas-lsp ({finding.code}): Count on a global semaphore: {node.arg} = "
                       "pl.get_global(plgpu.SemaphoreType.REGULAR) in the body, not an operand", "safe", preferred=True)


def _made_only_for(model, launch: ast.Call, argument: ast.expr) -> ast.Assign | None:
    """`count = jnp.zeros(...)`, the one statement of the launching function binding the argument's name,
    where the launch is its only reader: it goes with the operand."""
    host = model.enclosing_function(launch)
    if not isinstance(argument, ast.Name) or host is None:
        return None
    binds = [s for s in ast.walk(host) if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == argument.id]
    if len(binds) != 1 or binds[0] not in host.body or _loads(model, host, argument.id) != [argument]:
        return None
    value = binds[0].value
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    # Built from constants and shapes only (jnp.zeros((), jnp.int32)): nothing else happens there.
    if len(calls) != 1 or not all(isinstance(n, (ast.Call, ast.Attribute, ast.Name, ast.Constant, ast.Tuple, ast.Load, ast.keyword))
                                  for n in ast.walk(value)):
        return None
    return binds[0]
