"""The keyword nodes a kernel factory's `functools.partial` preset binds, for the kernel it makes.

`LAUNCHERS = {"single_core": functools.partial(pl.kernel, mesh=pltpu.create_tensorcore_mesh("core"))}` and then
`LAUNCHERS[layout](body, out_type=...)`: the kernel's `mesh=` is written in the preset, not at the call that makes
the kernel. Its value alone does not say which mesh it is (a mesh is no value the evaluator keeps), so the kernel
model, which reads the backend from the mesh's constructor, needs the preset's keyword node. Given only where
the preset is written in the module of the kernel's call (a node read with another module's bindings would
name other things).
"""

from __future__ import annotations

from .values import KernelCall, Partial, Value


def keywords_of_partial(made: Value, preset: Partial) -> Value:
    """`made` (what calling `preset` gave) with the nodes of the keywords `preset` binds, where it is a kernel
    whose own call left them without one."""
    if not isinstance(made, KernelCall) or preset.node is None or preset.node not in made.model.parents:
        return made
    written = {k.arg: k.value for k in getattr(preset.node, "keywords", ()) if k.arg}
    if not any(node is None and key in written for key, _, node in made.kwargs):
        return made
    kwargs = tuple((key, value, written.get(key) if node is None else node) for key, value, node in made.kwargs)
    return KernelCall(made.api, made.model, made.node, made.body, kwargs)
