"""Fix (PAL007): a semaphore `pl.run_scoped` cannot share across blocks becomes a global one.

`pl.run_scoped(f, T, collective_axes=...)` calls `f` with a scoped `T` and returns what `f`
returns; `f(pl.get_global(T))` does the same with a semaphore shared by the whole grid or cluster,
which is what the collective axes asked for (checked with jax 0.12: the fixed kernel lowers).
One with no collective axes in a kernel with warpgroups becomes collective over the thread axis; beside a
global semaphore in a gridless kernel, the kernel also gets a one-block named grid, which JAX needs to lower both.
"""

from __future__ import annotations

import ast

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder, appended
from .one_block_grid import launch_on_one_block

_SEMAPHORES = ("SemaphoreType.REGULAR",)


def _run_scoped_at(model, span) -> ast.Call | None:
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Call) and model.source.span(node) == span:
            return node
    return None


def _regular(project, model, kind: ast.expr) -> bool:
    """`kind` is a Mosaic GPU REGULAR semaphore type, however written: `plgpu.SemaphoreType.REGULAR`, shaped
    (`REGULAR((num_blocks,))`), or a name holding one."""
    from ..analysis.evaluate import as_memtype
    from ..analysis.values import MemType

    if (ast.get_source_segment(model.text, kind) or "").endswith(_SEMAPHORES):
        return True
    memtype = as_memtype(project.evaluator.value(model, kind))
    return isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore


def fix(project, model, finding):
    if finding.facts.get("barrier") or finding.facts.get("local"):
        return None  # a BARRIER semaphore run_scoped cannot place: which REGULAR one is meant is not known; a buffer
    call = finding.facts.get("run_scoped") if finding.facts.get("model") is model else None
    call = call or _run_scoped_at(model, finding.span)
    if call is None or len(call.args) != 2 or any(k.arg != "collective_axes" for k in call.keywords):
        return None
    kernel = finding.facts.get("kernel")
    if finding.facts.get("collective_axes") == () and kernel is not None and kernel.thread_axes:
        return _collective_over_threads(project, model, finding, call, kernel.thread_axes)
    function, kind = call.args
    if isinstance(function, ast.Starred) or isinstance(kind, ast.Starred):
        return None
    if not _regular(project, model, kind):
        raise CannotFix("only a REGULAR semaphore can be global")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None or len(target.args) != 3:
        raise CannotFix("the run_scoped call was not found")
    pl = imports.name("jax.experimental.pallas")

    def rewrite(updated: cst.Call) -> cst.Call:
        scoped, allocation = updated.args[0].value, updated.args[1].value
        get_global = cst.Call(func=cst.parse_expression(f"{pl}.get_global"), args=[cst.Arg(allocation)])
        return cst.Call(func=scoped, args=[cst.Arg(get_global)], lpar=updated.lpar, rpar=updated.rpar)

    file.rewrite(target, rewrite)
    return builder.fix(f"pallas-lsp ({finding.code}): Use a global semaphore (pl.get_global)", "safe", preferred=True)


def _collective_over_threads(project, model, finding, call: ast.Call, thread_axes: tuple) -> object:
    """A run_scoped allocation with no collective axes in a kernel with warpgroups: Mosaic GPU allocates
    block-local memory once for all of them, so the allocation the code asks for is the one collective
    over the thread axis (jax 0.12 takes only that as block-local: `_is_block_local_scope`)."""
    if len(thread_axes) != 1 or not isinstance(thread_axes[0], str):
        raise CannotFix("the kernel's thread axis is not one name")
    kernel = finding.facts["kernel"]
    named_grid = bool(kernel.grid_axes) and all(isinstance(a, str) and a for a in kernel.grid_axes)
    builder = FixBuilder(project)
    one_block = ""
    if not named_grid and any(site.memtype is None or site.memtype.is_gpu_global_semaphore
                              for site in kernel.get_globals):
        # jax 0.12 sorts the block-local and global semaphore scopes together, and without grid names the
        # global one holds a placeholder: "TypeError: '<' not supported between instances of 'object' and 'str'".
        # A gridless kernel is one block: on a named one-block grid it means the same, and lowers.
        if kernel.entry.model is not model or not launch_on_one_block(project, kernel.entry, builder):
            raise CannotFix("with a global semaphore in a kernel without grid names, JAX cannot lower a "
                            "thread-collective one beside it")
        one_block = ", on a one-block grid (grid=(1,)), which lets JAX lower it beside the global semaphore"
    axis = f'"{thread_axes[0]}"' if thread_axes[0].isidentifier() else repr(thread_axes[0])
    file, _ = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None:
        raise CannotFix("the run_scoped call was not found")

    def rewrite(updated: cst.Call) -> cst.Call:
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        new = cst.Arg(cst.parse_expression(axis), keyword=cst.Name("collective_axes"), equal=equal)
        kept = [a for a in updated.args if not (a.keyword is not None and a.keyword.value == "collective_axes")]
        return updated.with_changes(args=appended(kept, new))

    file.rewrite(target, rewrite)
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate it for all warpgroups (collective_axes={axis}){one_block}",
                       "safe", preferred=True)
