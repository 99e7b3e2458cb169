"""A buffer type written as is where the launch's grid spec is built, in the get_global's own module.

A kernel module often holds both the body and the function that builds its grid spec
(`def gather_grid_spec(cfg, batch, dtype): return pltpu.PrefetchScalarGridSpec(...)`), while the launch sits in
a front-end module that imports neither `pltpu` nor the type's names. The scratch goes into the grid spec, so the
get_global's argument (`pltpu.SemaphoreType.DMA((2,))`) is written there as it is, where each of its names means
what it means beside the get_global: nothing has to be spelled in the launch's module.
"""

from __future__ import annotations

import ast

from .grid_spec import _module_level, grid_spec_site


class HomeSpecCode(str):
    """A scratch type's code written for the grid spec's module (the get_global's), not for the launch."""


def written_for_home_spec(project, model, argument: ast.expr, entries) -> HomeSpecCode | None:
    """The get_global's argument as written, where every launch's grid spec is built in its module (`model`) and
    each name it reads is a module-level one there, seen alike from the get_global and from where the grid spec
    is built; None otherwise."""
    text = ast.get_source_segment(model.text, argument)
    if not entries or text is None:
        return None
    names = [n for n in ast.walk(argument) if isinstance(n, ast.Name)]
    where = model.enclosing_function(argument) or model.tree
    if not _module_level(model, where, argument.lineno, names):
        return None
    for entry in entries:
        site = grid_spec_site(project, entry)
        if site is None or site[0] is not model:
            return None
        spec = site[1]
        if not _module_level(model, model.enclosing_function(spec) or model.tree, spec.lineno, names):
            return None
    return HomeSpecCode(text)
