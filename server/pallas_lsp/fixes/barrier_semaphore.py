"""Fix (PAL003): a TPU `pl.get_global(pltpu.SemaphoreType.BARRIER)` becomes the kernel's barrier semaphore.

    barrier = pl.get_global(pltpu.SemaphoreType.BARRIER)   ->   barrier = pltpu.get_barrier_semaphore()
    pl.pallas_call(..., )                                   ->   pl.pallas_call(..., compiler_params=
                                                                     pltpu.CompilerParams(collective_id=cfg.collective_id))

A BARRIER semaphore is what devices signal each other through before remote DMAs (no copy may land in a peer
whose kernel has not started). TPU gives it as `pltpu.get_barrier_semaphore()`, the semaphore XLA sets aside for
the launch's `collective_id` (jax 0.12 refuses it without one: "collective_id has to be specified when using a
custom barrier"). A BARRIER in `scratch_shapes` lowers too, but as a semaphore of the kernel's own, which no
other device's kernel shares: the handshake it was for is gone. The id is the launch's own where it has one; else
a config in scope at the launch that has a `collective_id` (`cfg.collective_id`); else the smallest number no
`collective_id=` of the module names (two kernels written apart then share none). Compiled for a TPU or under
the TPU interpreter (`pltpu.InterpretParams`), which runs it; `interpret=True` does not (jax 0.12: 'No
ir_type_handler').
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.call_of import callee
from ..analysis.kernel_model import TPU_TC, compiled_backend, site_interpreter
from ..analysis.values import ClassValue, Instance, MemType
from ..rules.pal011_barrier_semaphore_id_collision import FIRST_INTERNAL_ID
from .collective_id_below_internal import _literal_ids
from .kernel_edits import CannotFix, FixBuilder, call_with_keyword, replace_expression
from .sites import locate

_LAUNCHES = ("pl.pallas_call", "pl.kernel")


def fix(project, model, call, value, code: str):
    if code != "PAL003" or not isinstance(value, MemType) or value.constructor != "pltpu.SemaphoreType.BARRIER":
        return None
    if value.shape:
        raise CannotFix("an array of BARRIER semaphores: a TPU kernel has one barrier semaphore")
    located = locate(project, model, call, local=True)
    if located is None:
        return None
    _, _, entries = located
    if not entries or any(e.api not in _LAUNCHES or compiled_backend(project, e) != TPU_TC for e in entries):
        return None
    if any(site_interpreter(project, e, site) != "tpu" for e in entries for site in [*e.interpret, *e.maybe_interpret]):
        raise CannotFix("interpret=True runs no barrier semaphore (jax 0.12: 'No ir_type_handler for aval type'); "
                        "the TPU interpreter (pltpu.InterpretParams) does")
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    replace_expression(builder, model, call, f"{imports.name('jax.experimental.pallas.tpu')}.get_barrier_semaphore()")
    ids = {_give_collective_id(project, builder, entry) for entry in entries}
    return builder.fix(f"pallas-lsp ({code}): Use the kernel's barrier semaphore (pltpu.get_barrier_semaphore(), "
                       f"{', '.join(sorted(ids))})", "safe", preferred=True)


def _give_collective_id(project, builder: FixBuilder, entry) -> str:
    """The launch's `collective_id=`, added where it has none; what the title says of it."""
    launch_model = entry.model
    found = entry.kernel.kwarg("compiler_params")
    node = found[1] if found else None
    file, imports = builder.file(launch_model)
    if node is None:
        if found:
            raise CannotFix("the compiler parameters are not written at the launch")
        chosen = _new_id(project, entry)
        launch = file.find_ast(launch_model, entry.node, cst.Call)
        if launch is None or entry.kernel.node is not entry.node:
            raise CannotFix("the launch was not found")
        params = f"{imports.name('jax.experimental.pallas.tpu')}.CompilerParams(collective_id={chosen})"
        file.rewrite(launch, lambda updated: call_with_keyword(updated, "compiler_params", params))
        return f"collective_id={chosen}"
    name, params_call, where = callee(project, launch_model, node)
    if name != "pltpu.CompilerParams" or params_call is None or where is not launch_model:
        raise CannotFix("the compiler parameters are not a pltpu.CompilerParams(...) call of the launch's module")
    written = next((k.value for k in params_call.keywords if k.arg == "collective_id"), None)
    if written is not None:
        return f"collective_id={launch_model.segment(written, 40)}"
    if any(k.arg is None for k in params_call.keywords):
        raise CannotFix("the compiler parameters take **keywords, which may hold a collective_id")
    chosen = _new_id(project, entry)
    target = file.find_ast(launch_model, params_call, cst.Call)
    if target is None:
        raise CannotFix("the pltpu.CompilerParams(...) call was not found")
    file.rewrite(target, lambda updated: call_with_keyword(updated, "collective_id", chosen))
    return f"collective_id={chosen}"


def _new_id(project, entry) -> str:
    """`cfg.collective_id` of a parameter of the launching function whose class declares one, else the smallest
    id no `collective_id=` of the module names."""
    model = entry.model
    function = model.enclosing_function(entry.node)
    arguments = getattr(function, "args", None)
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs] if arguments is not None else []:
        binding = model.lookup(arg.arg, model.scope_of(entry.node), entry.node.lineno)
        if binding is None or binding.kind != "param":
            continue
        value = project.evaluator.binding_value(model, binding, None)
        options = getattr(value, "options", (value,))
        if options and all(isinstance(o, Instance) and _declares(o.cls, "collective_id") for o in options):
            return f"{arg.arg}.collective_id"
    used = _literal_ids(model)
    return str(next(i for i in range(FIRST_INTERNAL_ID) if i not in used))


def _declares(cls: ClassValue, name: str) -> bool:
    """The class body binds `name` (a field, a class attribute, a property)."""
    for statement in cls.node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and statement.target.id == name:
            return True
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            return True
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
            return True
    return False
