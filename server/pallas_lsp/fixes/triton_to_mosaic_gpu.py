"""Fix (PAL003): a Triton `pl.pallas_call` that asks for a global semaphore is launched with
`plgpu.kernel` (Mosaic GPU) instead, as the finding advises.

    fn = pl.pallas_call(body, out_shape=X, grid=(2,))   ->   fn = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))

Triton has no semaphore in any form (jax 0.12: `Unimplemented primitive in Pallas Triton lowering:
get_global`, and for scratch `scratch memory not implemented in the Triton backend`); Mosaic GPU
allocates the global one the body asks for. A `pallas_call` without block specs gives every program
the whole arrays in global memory, as `plgpu.kernel` gives its body GMEM refs; its grid is
`plgpu.kernel`'s, which must name its axes (`grid_names`), and `pl.program_id` reads it the same way
(jax 0.12 lowers both, also under `jax.vmap`). Unsafe: Mosaic GPU compiles for NVIDIA Hopper GPUs and
later only, where Triton also targets others. Offered only for a launch called with the body alone and
nothing but `out_shape`, `grid` and `interpret=False` (block specs, scratch, compiler parameters and
aliasing have no one-for-one `plgpu.kernel` form). barrier_as_scratch also converts a launch its own
`interpret=` or a GPU interpreter switch makes interpreted (`plgpu.kernel` takes the same keyword, and
set/force_gpu_interpret_mode reach it too: jax 0.12).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import TRITON
from .cst_locate import expression
from ..analysis.call_of import callee
from .kernel_edits import CannotFix, FixBuilder, remove_statement
from .sites import grid_rank, is_call_form, launches_running

_KEYWORDS = {"out_shape", "grid", "interpret"}
_AXES = ("x", "y", "z")  # a CUDA grid has at most three dimensions
TITLE = "Launch the kernel with plgpu.kernel (Mosaic GPU)"
UNSAFE = "Mosaic GPU compiles for NVIDIA Hopper GPUs and later only"


def triton_tuning(project, entry) -> ast.Assign | None | bool:
    """Where the launch's `compiler_params=` is Triton's tuning alone (`pltriton.CompilerParams(num_warps=...)`,
    which has no meaning for Mosaic GPU): True where written at the launch, the assignment of a name of the
    launch's function bound to it once and read only there; False otherwise."""
    found = entry.kernel.kwarg("compiler_params")
    node = found[1] if found else None
    if project is None or node is None or callee(project, entry.model, node)[0] != "pltriton.CompilerParams":
        return False
    if isinstance(node, ast.Call):
        return True
    model = entry.model
    binding = model.lookup(node.id, model.scope_of(node), node.lineno) if isinstance(node, ast.Name) else None
    function = model.enclosing_function(node)
    statement = binding.node if binding is not None else None
    if not (isinstance(statement, ast.Assign) and function is not None and statement in function.body
            and len(statement.targets) == 1 and isinstance(statement.value, ast.Call)):
        return False
    mentions = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == node.id]
    return statement if mentions == [statement.targets[0], node] else False


def _check(entry, interpreted: bool = False, project=None) -> int:
    """The rank of the launch's grid, or CannotFix where the launch is not one this fix rewrites.
    `interpreted`: an interpreted launch is rewritten too, its `interpret=` kept (the caller checks
    which interpreter runs it). With `project`, Triton's own tuning (`compiler_params=pltriton.CompilerParams(
    num_warps=...)`) is dropped too."""
    if entry.api != "pl.pallas_call" or (not interpreted and (entry.interpret or entry.maybe_interpret)):
        raise CannotFix("another launch, or an interpreted one, also runs the body")
    node = entry.node
    if not is_call_form(entry) or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        raise CannotFix("the pallas_call is not called with the body alone (a decorator, a partial)")
    for keyword in node.keywords:
        if keyword.arg == "compiler_params" and triton_tuning(project, entry) is not False:
            continue
        if keyword.arg not in _KEYWORDS:
            raise CannotFix(f"the pallas_call passes {keyword.arg or '**'}=, which plgpu.kernel has no one form for")
        if keyword.arg == "interpret" and not interpreted and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value in (False, None)):
            raise CannotFix("the pallas_call's interpret= is not False")
    rank, _ = grid_rank(entry)
    found = entry.kernel.kwarg("grid")
    if rank is None or rank > len(_AXES) or (found is not None and type(getattr(found[0], "value", None)) is int):
        raise CannotFix("the grid is not a tuple of at most three dimensions known statically")
    return rank


def convertible(entries, interpreted: bool = False, project=None) -> list[int]:
    """The grid rank of each launch, or CannotFix unless every one is a Triton launch this fix rewrites
    (with `interpreted`, or a pallas_call run interpreted: `plgpu.kernel` takes the same `interpret=`)."""
    return [_check(entry, interpreted, project) for entry in entries]


def convert(builder: FixBuilder, entry, rank: int) -> None:
    """`pl.pallas_call(body, out_shape=X, grid=G)` -> `plgpu.kernel(body, out_type=X, grid=G, grid_names=...)`;
    Triton's tuning (`compiler_params=pltriton.CompilerParams(...)`) goes, with the name bound to it."""
    tuning = triton_tuning(builder.project, entry)
    if isinstance(tuning, ast.Assign):
        remove_statement(builder, entry.model, tuning)
    file, imports = builder.file(entry.model)
    launch = file.find_ast(entry.model, entry.node, cst.Call)
    if launch is None:
        raise CannotFix("the kernel launch was not found")
    kernel = f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.kernel"
    names = "(" + ", ".join(f'"{a}"' for a in _AXES[:rank]) + ("," if rank == 1 else "") + ")"

    def change(updated: cst.Call) -> cst.Call:
        args = []
        for arg in updated.args:
            if tuning is not False and arg.keyword is not None and arg.keyword.value == "compiler_params":
                if args and arg is updated.args[-1]:  # the one before ends the call as this one did
                    args[-1] = args[-1].with_changes(comma=arg.comma)
                continue
            if arg.keyword is not None and arg.keyword.value == "out_shape":
                arg = arg.with_changes(keyword=cst.Name("out_type"))
            args.append(arg)
            if arg.keyword is not None and arg.keyword.value == "grid" and rank:
                args[-1] = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                args.append(cst.Arg(expression(names), keyword=cst.Name("grid_names"), equal=arg.equal,
                                    comma=arg.comma))
        return updated.with_changes(func=expression(kernel), args=args)

    file.rewrite(launch, change)


def fix(project, model, call: ast.Call, finding):
    if finding.code != "PAL003" or finding.facts.get("backend") != TRITON:
        return None
    entries = launches_running(project, model, model.enclosing_function(call))
    if not entries:
        return None
    builder = FixBuilder(project)
    for entry, rank in zip(entries, convertible(entries, project=project)):
        convert(builder, entry, rank)
    return builder.fix(f"pallas-lsp ({finding.code}): {TITLE}, which has global semaphores, instead of Triton "
                       f"(unsafe: {UNSAFE})", "unsafe")
