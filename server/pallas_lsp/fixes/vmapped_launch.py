"""A compiled `pl.kernel` run under `jax.vmap`, whose body a fix makes allocate with `pl.run_scoped`, is
launched with `plgpu.kernel` instead:

    pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=2, thread_name="wg"))
        ->  plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg")

jax 0.11 batches a `pl.kernel` (Mosaic GPU's mpmd_map lowering) by batching its body, and has no batching
rule for `run_scoped` ("Batching rule for 'run_scoped' not implemented", jax 0.11.2 on an H200); a
`plgpu.kernel` is a `pallas_call`, which batches by adding a grid axis and leaves the body as written
(jax 0.11.2 compiles and runs it there; jax 0.12 lowers both). `plgpu.kernel(body, out_type=X, **kw)` is
`pl.kernel(body, out_type=X, mesh=plgpu.Mesh(**kw))`: the same launch, spelled so the fix runs on both.
Where the mesh is not written as `plgpu.Mesh(...)` in the launch, the fix keeps `pl.kernel`, and is not
offered where the analysed environment's jax is older than 0.12.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.jax_version import jax_version
from ..analysis.kernel_model import _vmapped
from ..analysis.values import Api
from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder
from .sites import is_call_form

# pl.kernel's keywords that plgpu.kernel takes as they are (its other keywords go to the plgpu.Mesh)
_SHARED = {"out_type", "compiler_params", "cost_estimate", "debug", "interpret"}
RUN_SCOPED_BATCHED_SINCE = (0, 12)
TITLE = ", launched with plgpu.kernel, which jax.vmap batches with run_scoped on every jax"


def _mesh_call(project, entry) -> ast.Call | None:
    """The `plgpu.Mesh(k=v, ...)` written as the launch's `mesh=`, where the launch can become a plgpu.kernel."""
    node = entry.node
    if not isinstance(node, ast.Call) or not is_call_form(entry) or len(node.args) > 2:
        return None
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None
    keywords = {k.arg for k in node.keywords}
    if None in keywords or not keywords <= _SHARED | {"mesh"}:
        return None  # **kwargs, or name=/metadata=, which plgpu.kernel would hand to the mesh
    mesh = next((k.value for k in node.keywords if k.arg == "mesh"), None)
    if not isinstance(mesh, ast.Call) or mesh.args or any(k.arg is None for k in mesh.keywords):
        return None
    if {k.arg for k in mesh.keywords} & keywords:
        return None
    callee = project.evaluator.value(entry.model, mesh.func)
    return mesh if isinstance(callee, Api) and callee.name == "plgpu.Mesh" else None


def relaunch_if_vmapped(project, builder: FixBuilder, entries) -> str:
    """Launch each vmapped compiled `pl.kernel` of `entries` with plgpu.kernel; CannotFix where one cannot
    be and the environment's jax cannot batch run_scoped in a pl.kernel. What the fix's title adds, or ""."""
    relaunched = False
    for entry in entries:
        if entry.api != "pl.kernel" or not _vmapped(project, entry):
            continue
        mesh = _mesh_call(project, entry)
        if mesh is None:
            version = jax_version(project)
            if version is not None and version < RUN_SCOPED_BATCHED_SINCE:
                raise CannotFix(f"jax {'.'.join(map(str, version))} cannot batch pl.run_scoped in a pl.kernel run "
                                "under jax.vmap, and this launch's mesh is not written as plgpu.Mesh(...) in it, "
                                "so it cannot become a plgpu.kernel")
            continue
        _relaunch(builder, entry, mesh)
        relaunched = True
    return TITLE if relaunched else ""


def _relaunch(builder: FixBuilder, entry, mesh: ast.Call) -> None:
    file, imports = builder.file(entry.model)
    launch = file.find_ast(entry.model, entry.node, cst.Call)
    if launch is None:
        raise CannotFix("the kernel launch was not found")
    kernel = f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.kernel"

    def change(updated: cst.Call) -> cst.Call:
        args = []
        for position, arg in enumerate(updated.args):
            if arg.keyword is None and position == 1:  # out_type is keyword-only in plgpu.kernel
                arg = arg.with_changes(keyword=cst.Name("out_type"), equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            if arg.keyword is not None and arg.keyword.value == "mesh":
                mesh_args = list(arg.value.args)
                if mesh_args:
                    mesh_args[-1] = mesh_args[-1].with_changes(comma=arg.comma)
                args.extend(mesh_args)
                continue
            args.append(arg)
        if args and updated.args and args[-1].comma != updated.args[-1].comma:
            args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(func=expression(kernel), args=args)

    file.rewrite(launch, change)
