"""Fix (PAL001): `pl.get_global(T, collective_axes=...)` (or `(T, "x")`) loses the scope it does not
take; `pl.get_global(T, what=T)` passes the type once.

`collective_axes` asks for a semaphore shared along those axes; a global semaphore is shared by the
whole grid and cluster already. Where the named axes are every axis of the kernel running the call,
the keyword just goes. Where they are some of them, one semaphore per index of the others is what
was asked for: `pl.get_global(T((rows,))).at[lax.axis_index("rows")]` (sizes written at the
launch). Both are safe. Where neither is known (the kernel, an axis size), dropping the keyword
shares it more widely than asked: unsafe.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.kernel_model import kernel_models
from ..analysis.values import Const, MemType, Seq
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder


def _axis_names(value) -> set[str] | None:
    items = value.items if isinstance(value, Seq) else (value,)
    if all(isinstance(item, Const) and isinstance(item.value, str) for item in items):
        return {item.value for item in items}
    return None


def fix(project, model, call, value, code: str):
    if code != "PAL001" or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    keywords = [k.arg for k in call.keywords]
    if len(call.args) == 1 and keywords == ["collective_axes"]:
        scope, label = call.keywords[0].value, "collective_axes"
    elif len(call.args) == 2 and not keywords:  # get_global(T, "x"): the scope passed positionally
        scope, label = call.args[1], "the second argument"
    elif len(call.args) == 1 and keywords == ["what"]:
        return _type_once(project, model, call, code)
    else:
        return None
    memtype = as_memtype(project.evaluator.value(model, call.args[0]))
    if not (isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore):
        return None
    named = _axis_names(project.evaluator.value(model, scope))
    kernels = [k for k in kernel_models(project, model) if any(site.call is call for site in k.get_globals)]
    exact = named is not None and bool(kernels) and all(
        k.grid_axes is not None and k.cluster_axes is not None and set(k.grid_axes) | set(k.cluster_axes) <= named
        for k in kernels)
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None or len(target.args) != 2:
        raise CannotFix("the get_global call was not found")
    title = f"pallas-lsp ({code}): Drop {label} (a global semaphore is shared by the whole grid)"
    per_index = None if exact or named is None else _per_index(project, model, call, kernels, named, imports)

    def drop(updated: cst.Call) -> cst.BaseExpression:
        dropped = updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        if per_index is None:
            return dropped
        shape, indices, _ = per_index
        kind = dropped.args[0].value
        shaped = dropped.with_changes(args=[cst.Arg(cst.Call(func=kind, args=[cst.Arg(expression(shape))]))])
        return cst.Subscript(value=cst.Attribute(value=shaped.with_changes(lpar=[], rpar=[]), attr=cst.Name("at")),
                             slice=[cst.SubscriptElement(cst.Index(expression(index)),
                                                         comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                                                         if i < len(indices) - 1 else cst.MaybeSentinel.DEFAULT)
                                    for i, index in enumerate(indices)],
                             lpar=updated.lpar, rpar=updated.rpar)

    file.rewrite(target, drop)
    if exact:
        return builder.fix(title, "safe", preferred=True)
    if per_index is not None:
        shape, _, axes = per_index
        return builder.fix(f"pallas-lsp ({code}): One global semaphore per {', '.join(axes)}: "
                           f"REGULAR({shape}) indexed with axis_index", "safe", preferred=True)
    return builder.fix(f"{title} (unsafe: also along axes it does not name)", "unsafe")


def _type_once(project, model, call, code: str):
    """`get_global(T, what=T)`: the same type twice; passing it once means the same."""
    first, again = call.args[0], call.keywords[0].value
    same_text = ast.get_source_segment(model.text, first) == ast.get_source_segment(model.text, again)
    value = as_memtype(project.evaluator.value(model, first))
    if not same_text and not (isinstance(value, MemType) and value == as_memtype(project.evaluator.value(model, again))):
        return None
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None or len(target.args) != 2:
        raise CannotFix("the get_global call was not found")
    file.rewrite(target, lambda updated: updated.with_changes(
        args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
    return builder.fix(f"pallas-lsp ({code}): Pass the semaphore type once", "safe", preferred=True)


def _per_index(project, model, call, kernels, named: set[str], imports):
    """(shape code, index codes, axes) of one semaphore per index of the axes `collective_axes`
    left out, or None where the kernel, its axes or their sizes are not all known."""
    from ..analysis.kernel_model import axis_sizes

    if len(kernels) != 1 or kernels[0].grid_axes is None or kernels[0].cluster_axes is None:
        return None
    kernel = kernels[0]
    axes = [axis for axis in (*kernel.grid_axes, *kernel.cluster_axes) if axis not in named]
    sizes = axis_sizes(project, kernel.entry)
    argument = call.args[0]
    if not axes or any(not axis or axis not in sizes for axis in axes) or not named <= {*kernel.grid_axes,
                                                                                        *kernel.cluster_axes}:
        return None
    if not (isinstance(argument, ast.Attribute) and argument.attr == "REGULAR"):
        return None  # shaped already, or spelled elsewhere
    shape = f"({', '.join(str(sizes[axis]) for axis in axes)}{',' if len(axes) == 1 else ''})"
    lax = imports.name("jax.lax")
    return shape, [f'{lax}.axis_index("{axis}")' for axis in axes], axes
