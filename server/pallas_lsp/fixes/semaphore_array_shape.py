"""Fix (PAL005): a global semaphore array indexed with more indices than it has dimensions, each index a grid
axis, takes one dimension per axis.

    done = pl.get_global(plgpu.SemaphoreType.REGULAR((geo.num_blocks,)))   # flat, one per block
    pl.semaphore_signal(done.at[e, s])                                     # e, s: axis_index("expert"/"shard")
->  done = pl.get_global(plgpu.SemaphoreType.REGULAR((jax.lax.axis_size("expert"), jax.lax.axis_size("shard"))))

Where every use indexes the array alike with `lax.axis_index` of distinct grid axes, the array the indices ask
for is one semaphore per block of those axes: each block's own, as the indices say. Its dimensions are the axes'
sizes, `jax.lax.axis_size(axis)` (static inside the kernel, checked with jax 0.12: get_global takes them), so it
fits every grid. Not offered where a use indexes otherwise (another expression, another number of indices), or
where the semaphore type is not written in the get_global call.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernels import get_global_argument
from .kernel_edits import CannotFix, FixBuilder
from .semaphore_wait_count import _axis_of


def fix(project, model, finding):
    facts = finding.facts
    use, shape, kernel, call = (facts.get(key) for key in ("use", "shape", "kernel", "get_global"))
    if use is None or shape is None or kernel is None or call is None or use.indices is None \
            or use.indices <= len(shape) or facts.get("model") is not model:
        return None
    site = next((s for s in kernel.get_globals if s.call is call), None)
    body = kernel.entry.body
    if site is None or body is None or not kernel.grid_axes:
        return None
    if _index_axes(project, body, use, use.indices) is None:
        return None  # not indexed by axis_index: another mistake (which index to drop is not known)
    axes = None
    for other in site.uses:
        if other.kind == "called":
            continue
        found = _index_axes(project, body, other, use.indices)
        if found is None or len(set(found)) != len(found) or not set(found) <= set(kernel.grid_axes):
            raise CannotFix("the semaphore is not indexed with the same grid axes' axis_index at every use")
        if axes is not None and found != axes:
            raise CannotFix("the semaphore is not indexed with the same grid axes' axis_index at every use")
        axes = found
    argument = get_global_argument(call)
    kind = argument.func if isinstance(argument, ast.Call) and len(argument.args) == 1 and not argument.keywords \
        else argument  # `REGULAR((n,))`, or the scalar `REGULAR`
    if not (isinstance(kind, ast.Attribute) and kind.attr in ("REGULAR", "BARRIER")):
        raise CannotFix("the semaphore type is not written in the get_global call")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    lax = imports.name("jax.lax")
    dims = ", ".join(f'{lax}.axis_size("{axis}")' for axis in axes) + ("," if len(axes) == 1 else "")
    found = file.find_ast(model, argument, cst.Call if isinstance(argument, ast.Call) else cst.Attribute)
    if found is None:
        raise CannotFix("the semaphore type was not found")
    shaped = [cst.Arg(cst.parse_expression(f"({dims})"))]
    file.rewrite(found, lambda updated: updated.with_changes(args=shaped) if isinstance(updated, cst.Call)
                 else cst.Call(func=updated, args=shaped))
    return builder.fix(f"pallas-lsp ({finding.code}): One semaphore per block of {', '.join(axes)}: "
                       f"shape ({dims})", "safe", preferred=True)


def _index_axes(project, body, use, count: int) -> list[str] | None:
    """The grid axes of the `axis_index` values of the use's `.at[i, j]` (`count` of them); None otherwise."""
    at = use.at
    if use.indices != count or at is None or use.model is not body.model or not isinstance(at, ast.Subscript):
        return None
    index = at.slice
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    if len(items) != count:
        return None
    axes = [_axis_of(project, use.model, body, item) for item in items]
    return None if None in axes else axes
