"""Fix (PAL001, PAL002): a helper (a function, or a method of a module-level class: an Enum member's
`acquire()`) that returns `pl.get_global(T)` to the kernel bodies calling it returns `T` instead, and each call
`name = helper(...)` becomes scratch of the body's launches, allocated there by the same call.

    def sumsq_buffer(block_rows):                          def sumsq_buffer(block_rows):
        return pl.get_global(pltpu.VMEM((block_rows, 128), ...))  return pltpu.VMEM((block_rows, 128), ...)

    def kernel(cfg, x_ref, o_ref):                   ->    def kernel(cfg, x_ref, o_ref, acc):
        acc = sumsq_buffer(cfg.block_rows)                     ...
        ...                                                pl.pallas_call(functools.partial(kernel, cfg), ...,
    pl.pallas_call(functools.partial(kernel, cfg), ...)        scratch_shapes=[sumsq_buffer(cfg.block_rows)])

The type is still built by the helper, from what each call passes (carried to the launch as `type_in_scope`
carries any scratch type), so it holds for every configuration. Only where every mention of the helper in the
workspace is such a call, so no other user of the helper expects a buffer; the buffer's kind at each call is
the helper's argument evaluated with that call's arguments (one `Resource.spec()` gives a VMEM buffer for one
member, a semaphore for another), and each call is moved as `allocate_as_scratch` moves a get_global.
"""

from __future__ import annotations

import ast

from ..analysis.evaluate import as_memtype
from ..analysis.frames import Frame
from ..analysis.values import Func, MemType, OneOf
from . import allocate_as_scratch
from .kernel_edits import CannotFix, FixBuilder, replace_expression
from .sites import helper_mentions


def fix(project, model, call: ast.Call, value, code: str):
    if code not in ("PAL001", "PAL002", "PAL003"):
        return None
    helper = model.enclosing_function(call)
    if not _module_level(model, helper):
        return None
    returns = [n for n in ast.walk(helper) if isinstance(n, ast.Return) and model.enclosing_function(n) is helper]
    if len(returns) != 1 or returns[0].value is not call or len(call.args) != 1 or call.keywords \
            or isinstance(call.args[0], ast.Starred):
        return None
    argument = ast.get_source_segment(model.text, call.args[0])
    if argument is None:
        raise CannotFix("the get_global's argument was not found")
    sites = _call_sites(project, model, helper)
    builder = FixBuilder(project)
    titles, unsafe = [], []
    for source, site in sites:
        kind = _kind_at(project, source, site, model, helper, call.args[0])
        if kind is None:
            raise CannotFix(f"what {helper.name} allocates at a call is not known")
        # PAL003 where the helper's argument, seen without its call, may be anything: at the call, a buffer (no
        # semaphore) is what PAL001 says of it.
        asked = "PAL001" if code == "PAL003" and not kind.constructor.startswith(_SEMAPHORES) else code
        made = allocate_as_scratch.fix(project, source, site, kind, asked, argument=site, builder=builder)
        if made is None:
            raise CannotFix(f"the buffer {helper.name} gives at a call cannot be allocated as scratch")
        title, note = made
        titles.append(title)
        unsafe += [note] if note else []
    replace_expression(builder, model, call, argument)
    first = titles[0].split("): ", 1)
    title = f"pallas-lsp ({code}): {first[1]}; {helper.name} returns its type" + (
        f" ({len(sites)} calls)" if len(sites) > 1 else "")
    if unsafe:
        return builder.fix(f"{title} (unsafe: {'; '.join(dict.fromkeys(unsafe))})", "unsafe")
    return builder.fix(title, "safe", preferred=True)


_SEMAPHORES = ("pltpu.SemaphoreType", "plgpu.SemaphoreType", "pl.semaphore", "plgpu.Barrier")


def _module_level(model, helper) -> bool:
    """A module-level function, or a method of a module-level class (a static or class method too), without other
    decorators (a property, a cache: what the call gives is no longer the helper's return)."""
    if not isinstance(helper, ast.FunctionDef) or any(
            not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in helper.decorator_list):
        return False
    owner = model.parents.get(helper)
    return owner is model.tree or (isinstance(owner, ast.ClassDef) and owner in model.tree.body)


def _call_sites(project, model, helper: ast.FunctionDef) -> list[tuple[object, ast.Call]]:
    """(module, call) for every mention of the helper in the workspace, each `name = helper(...)`; CannotFix where
    one is anything else (passed on, stored, its result used in place)."""
    found = []
    method = isinstance(model.parents.get(helper), ast.ClassDef)  # named only as an attribute: `Buffers.acc(8)`
    for source, node in helper_mentions(project, model, helper, method=method):
        site = source.parents.get(node)
        statement = source.parents.get(site)
        if not (isinstance(site, ast.Call) and site.func is node and isinstance(statement, ast.Assign)
                and statement.value is site and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            raise CannotFix(f"{helper.name} is used other than as `name = {helper.name}(...)`")
        if any(isinstance(a, ast.Starred) for a in site.args) or any(k.arg is None for k in site.keywords):
            raise CannotFix(f"a call of {helper.name} unpacks its arguments")
        found.append((source, site))
    if not found:
        raise CannotFix(f"{helper.name} is never called")
    return found


def _kind_at(project, source, site: ast.Call, model, helper: ast.FunctionDef, argument: ast.expr) -> MemType | None:
    """The helper's get_global argument as this call makes it: its parameters bound to the call's arguments (and
    `self` to the receiver, `Resource.PHASE_FLAG`). None where it is not one known allocation type."""
    evaluator = project.evaluator
    callee = evaluator.value(source, site.func)
    if not (isinstance(callee, Func) and callee.node is helper):
        return None
    args = [evaluator.value(source, a) for a in site.args]
    kwargs = {k.arg: evaluator.value(source, k.value) for k in site.keywords}
    params = evaluator.bind_arguments(callee, args, kwargs)
    value = evaluator.value(model, argument, Frame(helper, params, 1))
    if isinstance(value, OneOf):
        return None
    kind = as_memtype(value)
    return kind if isinstance(kind, MemType) else None
