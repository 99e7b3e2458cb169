"""Quick fixes for get_global findings: LibCST rewrites turned into text edits.

`get_global_fixes` is what the rules call; each fix module answers with a `Fix` or nothing
(a fix that cannot be made safely is not offered, never made wrong).
"""

from __future__ import annotations

import logging

from ..analysis.findings import Finding, Fix

log = logging.getLogger(__name__)


def get_global_fixes(project, model, call, value, finding: Finding) -> tuple[Fix, ...]:
    """Fixes for a finding on `call` (a get_global) whose argument evaluated to `value`."""
    # Imported here, not at start-up: LibCST costs ~0.25 s of the server's cold start, and a file
    # without findings never needs it.
    from . import allocate_as_scratch, disable_for_line, pass_as_input, pass_as_operand, use_global_semaphore
    from .kernel_edits import CannotFix

    fixes: list[Fix] = []
    for builder in (pass_as_input, pass_as_operand, allocate_as_scratch, use_global_semaphore):
        try:
            found = builder.fix(project, model, call, value, finding.code)
        except CannotFix as reason:
            log.debug("%s not offered: %s", builder.__name__, reason)
            continue
        except RecursionError:  # valid code nested deeper than LibCST can walk: no fix, the finding stays
            log.info("%s not offered: the statement is nested too deeply", builder.__name__)
            continue
        except Exception:  # a fix must never cost the user their diagnostics
            log.exception("building %s failed", builder.__name__)
            continue
        if found is not None:
            fixes.append(found)
    if not any(f.preferred for f in fixes):
        safe = [i for i, f in enumerate(fixes) if f.safe]
        if safe:
            from dataclasses import replace

            fixes[safe[0]] = replace(fixes[safe[0]], preferred=True)
    disable = disable_for_line.fix(model, finding.span, finding.code)
    if disable is not None:
        fixes.append(disable)
    return tuple(fixes)
