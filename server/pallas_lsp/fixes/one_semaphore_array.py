"""Fix (PAL004): the gridless kernel's global semaphores become one array, `REGULAR((n,))`, indexed.

    ready = pl.get_global(plgpu.SemaphoreType.REGULAR)      semaphores = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
    done = pl.get_global(plgpu.SemaphoreType.REGULAR)   ->  ready = semaphores.at[0]
                                                            done = semaphores.at[1]

n distinct zero-initialised semaphores before and after, one reservation that JAX's estimator
counts right (checked with jax 0.12: the fixed kernel lowers). Only where each `get_global` is
traced exactly once (not in a loop, not in a helper called twice: there each call made a new
semaphore), all are scalar REGULAR semaphores written in the kernel body or functions nested in
it (the array is defined in the body, before the first of them), and nothing else reserves one.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.evaluate import as_memtype
from ..analysis.kernels import get_global_argument
from ..analysis.values import MemType
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder, unique_name
from .traced_once import in_loop



def _flatten(allocations):
    for allocation in allocations:
        yield allocation
        yield from _flatten(allocation.body)


def _functions_around(model, node: ast.AST) -> list[ast.AST]:
    """The functions enclosing `node`, innermost first."""
    found, function = [], model.enclosing_function(node)
    while function is not None:
        found.append(function)
        function = model.enclosing_function(function)
    return found


def fix(project, model, finding):
    kernel = finding.facts.get("kernel")
    if kernel is None:
        return None
    allocations = list(_flatten(kernel.allocations))
    if any(a.kind != "get_global" for a in allocations):
        raise CannotFix("a run_scoped semaphore shares the kernel's reservations")
    calls = [site.call for site in kernel.get_globals]
    if len(calls) < 2 or sorted(map(id, calls)) != sorted(id(a.node) for a in allocations):
        raise CannotFix("a get_global is traced more or fewer times than it is written")
    if any(site.model is not model for site in kernel.get_globals):
        raise CannotFix("a get_global is in another module")
    kinds = set()
    for call in calls:
        argument = get_global_argument(call)
        memtype = as_memtype(project.evaluator.value(model, argument)) if argument is not None else None
        if not (isinstance(memtype, MemType) and memtype.is_gpu_global_semaphore and memtype.shape == ()
                and isinstance(argument, ast.Attribute) and argument.attr == "REGULAR"):
            raise CannotFix("only scalar REGULAR semaphores written as such are merged")
        kinds.add(ast.get_source_segment(model.text, argument))
    if len(kinds) != 1:
        raise CannotFix("the semaphore types are spelled differently")
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    chains = [_functions_around(model, call) for call in calls]
    common = [f for f in chains[0] if all(f in chain for chain in chains[1:])]
    body = kernel.entry.body.node if kernel.entry.body is not None else None
    if not common or not isinstance(common[0], (ast.FunctionDef, ast.AsyncFunctionDef)) or body not in chains[0]:
        raise CannotFix("the get_globals are not all in the kernel body")
    host = common[0]
    if body not in _functions_around(model, host) and host is not body:
        raise CannotFix("the get_globals are not all in the kernel body")
    if any(in_loop(model, call, host) for call in calls):
        raise CannotFix("a get_global is in a loop")

    builder = FixBuilder(project)
    file, _ = builder.file(model)
    name = unique_name(model, host, "semaphores")
    for index, call in enumerate(calls):
        target = file.find_ast(model, call, cst.Call)
        if target is None:
            raise CannotFix("a get_global was not found")
        file.rewrite(target, lambda updated, index=index: expression(f"{name}.at[{index}]").with_changes(
            lpar=updated.lpar, rpar=updated.rpar))
    first = calls[0]
    host_def = file.function(host)
    node = file.find_ast(model, first, cst.Call)
    while node is not None and (host_def is None or file.parent(node) is not host_def.body):
        node = file.parent(node)
    if node is None:
        raise CannotFix("the kernel body's block was not found")
    block = host_def.body
    position = list(block.body).index(node)
    get_global = ast.get_source_segment(model.text, calls[0].func)
    kind = kinds.pop()
    allocate = cst.parse_statement(f"{name} = {get_global}({kind}(({len(calls)},)))\n")

    def insert(updated: cst.IndentedBlock) -> cst.IndentedBlock:
        lines = list(updated.body)
        lines.insert(position, allocate)
        return updated.with_changes(body=lines)

    file.rewrite(block, insert)
    return builder.fix(f"pallas-lsp ({finding.code}): Use one semaphore array, {kind}(({len(calls)},)), "
                       "indexed with .at[i]", "safe")

