"""Fix: ask `get_global` for `plgpu.SemaphoreType.REGULAR`, the one type it allocates.

For a `SemaphoreType.BARRIER`, a TPU semaphore type or another semaphore-like type whose result
the kernel only signals and waits on, or never uses: those uses mean the same on a REGULAR global
semaphore. The type is changed where it is written: in the call, or in the one variable, constant,
dict entry, class attribute, default parameter, helper return or other module's constant that
serves only this `get_global` (`type_definition`).
Not offered where the kernel runs in interpret mode (REGULAR fails there too), nor for a TPU
semaphore in a `pl.pallas_call` (a TPU kernel: `allocate_as_scratch` keeps the TPU type).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.values import MemType
from .kernel_edits import CannotFix, FixBuilder
from .sites import interpreted_anywhere, launches
from .type_definition import names_semaphore_type, semaphore_type_written

_SEMAPHORE_USES = {"semaphore_signal", "semaphore_wait", "semaphore_read"}
SIGNALLED_TYPES = {"plgpu.SemaphoreType.BARRIER", "pltpu.SemaphoreType.REGULAR", "pltpu.SemaphoreType.DMA",
                    "pltpu.SemaphoreType.BARRIER"}


def _only_signalled(model, function: ast.AST, name: str) -> bool:
    """Every use of `name` in `function` is a signal, wait or read (none at all is fine too: an unused
    semaphore of any type allocates nothing anyone reads)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            used, parent = node, model.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr == "at":  # sems.at[i]
                used = model.parents.get(parent)
                parent = model.parents.get(used) if isinstance(used, ast.Subscript) else None
            if not (isinstance(parent, ast.Call) and used in parent.args):
                return False
            func = parent.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called not in _SEMAPHORE_USES:
                return False
    return True


def result_only_signalled(model, call: ast.Call) -> bool:
    """The get_global's semaphore, assigned to a name (directly, or returned by a helper whose every
    call is assigned to one), is only signalled, waited on and read."""
    parent = model.parents.get(call)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        function = model.enclosing_function(call)
        return function is not None and _only_signalled(model, function, parent.targets[0].id)
    helper = model.enclosing_function(call)
    if not isinstance(parent, ast.Return) or not isinstance(helper, ast.FunctionDef):
        return False
    mentions = [node for node in ast.walk(model.tree) if isinstance(node, ast.Name) and node.id == helper.name]
    if not mentions:
        return False
    for mention in mentions:
        call_site = model.parents.get(mention)
        if not (isinstance(call_site, ast.Call) and call_site.func is mention):
            return False
        if not result_only_signalled(model, call_site):
            return False
    return True


def uses_only_signalled(project, model, call: ast.Call) -> bool:
    """The kernel model's uses of the semaphore (through a list of one, a lambda called once, a helper's
    parameter) are signals, waits and reads only, or there are none."""
    from ..analysis.kernel_model import uses_of

    return all(use.kind in {"signal", "wait", "read", "called"} for use in uses_of(project, model, call))


def _constant_arguments(call: ast.Call) -> bool:
    """Every argument of `call` is a literal (`sync_type("counter")`): the branch the callee takes is fixed."""
    return all(isinstance(a, ast.Constant) for a in [*call.args, *(k.value for k in call.keywords)]) and all(
        k.arg is not None for k in call.keywords)


def _returned_type(project, model, argument, constructor: str) -> tuple | None:
    """(module, `X.SemaphoreType.Y`) returned by the function or method this get_global argument calls
    (with no arguments, or literal ones that select a branch: `sync_type("counter")` of an `@overload`ed
    helper), where that return is the only one giving `constructor` and the function is named only at this
    call in the workspace (so changing it changes only this get_global)."""
    from ..analysis.values import Func

    if not (isinstance(argument, ast.Call) and _constant_arguments(argument)):
        return None
    callee = project.evaluator.value(model, argument.func)
    if not isinstance(callee, Func) or not isinstance(callee.node, ast.FunctionDef) \
            or not project.is_workspace_file(callee.model.path):
        return None
    own = [node for node in ast.walk(callee.node) if isinstance(node, ast.Return)
           and callee.model.enclosing_function(node) is callee.node]
    giving = [node for node in own if names_semaphore_type(node.value)
              and getattr(project.evaluator.value(callee.model, node.value), "name", None) == constructor]
    if len(giving) != 1:
        return None
    name = callee.node.name
    mentions = [(source, node) for source in dict.fromkeys([model, callee.model, *project.importers_mentioning(
        callee.model, name)]) for node in ast.walk(source.tree)
        if (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)]
    if mentions != [(model, argument.func)]:
        return None
    return callee.model, giving[0].value


def fix(project, model, call, value, code: str):
    if code != "PAL001" or not isinstance(value, MemType) or value.constructor not in SIGNALLED_TYPES:
        return None
    argument = call.args[0] if call.args else None
    function = model.enclosing_function(call)
    if function is None or not (result_only_signalled(model, call) or uses_only_signalled(project, model, call)):
        raise CannotFix("the semaphore is used other than signalled, waited on or read (as a barrier, "
                        "or passed on), where a REGULAR one would not mean the same")
    if interpreted_anywhere(project, model, function):
        raise CannotFix("the kernel runs in interpret mode, where a global semaphore fails too")
    found = semaphore_type_written(project, model, argument)
    if found is None:
        found = _returned_type(project, model, argument, value.constructor)  # `self.sem_type()`: the fix belongs there
    if not value.constructor.startswith("plgpu.") and any(
            entry.api == "pl.pallas_call" for entry in launches(project, model, function)):
        return None  # a TPU semaphore in a pallas_call: a TPU kernel (allocate_as_scratch keeps it TPU)
    if found is None:
        return _at_call_site(project, model, argument, code)
    type_model, written = found
    builder = FixBuilder(project)
    file, imports = builder.file(type_model)
    target = file.find_ast(type_model, written, cst.Attribute)
    if target is None:
        return None
    if value.constructor.startswith("plgpu."):
        file.rewrite(target, lambda updated: updated.with_changes(attr=cst.Name("REGULAR")))
    else:
        plgpu = imports.name("jax.experimental.pallas.mosaic_gpu")
        file.rewrite(target, lambda updated: cst.parse_expression(f"{plgpu}.SemaphoreType.REGULAR"))
    return builder.fix(f"pallas-lsp ({code}): Use a global semaphore (plgpu.SemaphoreType.REGULAR)", "safe",
                       preferred=True)


def _read_only(node: ast.expr) -> bool:
    """A name, attribute chain or subscript of one by a constant or another such chain (`KINDS["flag"]`,
    `TABLE[Backend.GPU].arrival`), or a call of one with literal arguments (`sync_type("counter")`, a
    helper that picks a type): reading it twice or not at all is the same."""
    if isinstance(node, ast.Call) and (node.args or node.keywords) and _constant_arguments(node):
        node = node.func  # not `self.sem_type()`: a method computing the type, left to its class
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant) \
                and not _read_only(node.slice):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _at_call_site(project, model, argument, code: str):
    """The type comes from a registry others read too (`self.sync.READY`, `KINDS["flag"]` of a shared
    dict): this get_global asks for REGULAR itself and the registry stays as its other users need it."""
    if argument is None or not _read_only(argument):
        raise CannotFix("the semaphore type is not written where only this get_global reads it: "
                        "changing it would change its other uses")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    target = file.find_ast(model, argument, cst.BaseExpression)
    if target is None:
        return None
    plgpu = imports.name("jax.experimental.pallas.mosaic_gpu")
    file.rewrite(target, lambda updated: cst.parse_expression(f"{plgpu}.SemaphoreType.REGULAR"))
    shown = ast.unparse(argument)
    return builder.fix(f"pallas-lsp ({code}): Use a global semaphore (plgpu.SemaphoreType.REGULAR) in this "
                       f"get_global, in place of {shown}, which stays as it is", "safe", preferred=True)
