"""PAL002 get-global-interpret: `get_global` reached from a kernel that runs in interpret mode.

JAX has a clear message for this (`get_global discharge is not supported in interpret mode.`) but
never reaches it: users get `TypeError: No ir_type_handler for aval type ...` from deep inside the
HLO lowering, with no line of theirs. The diagnostic sits on the get_global call and points at
what makes the kernel interpreted: an error where that is certain (for at least one launch), a
warning where a run-time value decides (a conditional, the environment). A `pallas_call` drops a
get_global whose result feeds nothing (an unused `semaphore_read`, a helper ignoring it) first.
"""

from __future__ import annotations

import sys

from ..analysis.kernel_model import uses_of
from ..analysis.kernels import KernelIndex, get_global_calls, reachable_functions

CODE = "PAL002"
NAME = "get-global-interpret"
SEVERITY = "error"
SUMMARY = "pl.get_global cannot run in interpret mode."

QUOTE = "TypeError: No ir_type_handler for aval type: <class 'jax._src.state.types.AbstractRef'>"
SHORT_QUOTE = "TypeError: No ir_type_handler for aval type: <class '...AbstractRef'>"
MESSAGE = (f'JAX: "{SHORT_QUOTE}"; run it compiled or use a scratch semaphore. JAX fails with {QUOTE}: '
           "get_global has no interpret-mode implementation (JAX's own message for this, \"get_global discharge "
           "is not supported in interpret mode\", is never reached); a semaphore only for one block can come from "
           "scratch_types / scratch_shapes or pl.run_scoped instead")
MAYBE_MESSAGE = ("May run in interpret mode, where get_global fails; run it compiled or use a scratch semaphore. "
                 "Whether the kernel is interpreted is decided at run time (see the related location); in interpret "
                 f"mode JAX fails with {QUOTE}: get_global has no interpret-mode implementation")


def _importers(project, model):
    """Workspace modules that may launch kernels reaching this one: they import it and mention interpret mode."""
    return [other for other in project.importers(model) if project.index.mentions_interpret(other.path)]


def check(ctx):
    rule = sys.modules[__name__]
    project, model = ctx.project, ctx.model
    targets = {id(call): call for call in get_global_calls(project, model)}
    if not targets:
        return
    # Build every index first: a module's `with force_*_interpret_mode()` marks kernels of other modules.
    indexes = [KernelIndex.of(project, source) for source in [model, *_importers(project, model)]]
    entries = [e for index in indexes for e in index.entries if e.body is not None]
    reported: set[int] = set()
    # Certain interpret mode first (an error); then what only may run interpreted (a warning).
    for certain in (True, False):
        for entry in entries:
            sites = entry.interpret if certain else entry.maybe_interpret
            if not sites:
                continue
            functions = {id(f.node) for f in reachable_functions(project, entry.body) if f.model is model}
            for call_id, call in targets.items():
                if call_id in reported or id(model.enclosing_function(call)) not in functions:
                    continue
                if entry.api == "pl.pallas_call" and not any(use.live for use in uses_of(project, model, call)):
                    continue  # pallas_call drops a get_global feeding nothing as dead code before interpreting
                reported.add(call_id)
                verb = "runs" if certain else "may run"
                related = [ctx.related(site.model, site.node, f"the kernel {verb} in interpret mode because of {site.reason}")
                           for site in sites]
                related.append(ctx.related(entry.model, entry.node, f"kernel entry point ({entry.api})"))
                yield ctx.finding(rule, call, MESSAGE if certain else MAYBE_MESSAGE, tuple(related),
                                      facts={"get_global": call, "model": model, "entry": entry,
                                             "interpret": list(sites), "certain": certain},
                                      severity=None if certain else "warning")
