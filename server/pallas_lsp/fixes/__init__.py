"""Quick fixes for findings, built only when asked for: LibCST rewrites turned into text edits.

Analysis reports findings without fixes (building them costs more than finding them); the editor
asks for the fixes of the findings under the cursor, `check --fix`/`--diff` for one finding at a
time. `fixes_for` builds a finding's fixes and offers only the ones `verify.check_fix` accepts:
applied to the text, the code still parses, the finding is gone, nothing new is reported and
every name the fix uses is imported. A fix that cannot be made safely is not offered.
"""

from __future__ import annotations

import ast
import logging
import os
from dataclasses import replace

from ..analysis.findings import Finding, Fix

log = logging.getLogger(__name__)


def fixes_for(project, finding: Finding, text: str | None = None, verify: bool = True) -> tuple[Fix, ...]:
    """The fixes offered for `finding` of `text` (default: the project's text of its file):
    rewrites that passed verification, most preferred first, then the `# noqa` one."""
    return fixes_and_reason(project, finding, text, verify)[0]


def fixes_and_reason(project, finding: Finding, text: str | None = None,
                     verify: bool = True) -> tuple[tuple[Fix, ...], str | None]:
    """`fixes_for`'s fixes, and why no rewrite is offered when none is (what the editor shows on a
    disabled code action): the builders' refusals, else what the rule's page says has no fix."""
    from . import disable_for_line

    model = project.model(finding.path, text)
    rewrites: list[Fix] = []
    refusals: list[str] = []
    call = _get_global_at(project, model, finding)
    if call is not None:
        rewrites = _get_global_rewrites(project, model, call, finding, refusals)
    elif finding.code in FINDING_FIXES:
        rewrites = _finding_rewrites(project, model, finding, refusals)
    if rewrites:
        rewrites = _outside_elided(project, model, rewrites, refusals)
    if verify and rewrites:
        from .companion import COMPANION_CODES, completed
        from .verify import Baseline, added_code, check_fix

        baseline = Baseline(project, model)
        kept = []
        for fix in rewrites:
            reason = check_fix(project, baseline, finding, fix)
            code = added_code(reason)
            # PAL004's own fixes are combined by one_block_grid; a finding's fix with the added code's fix of
            # the same get_global would go round in circles.
            if (code in COMPANION_CODES.get(finding.code, COMPANION_CODES[None])
                    and finding.code not in ("PAL004", code)):
                whole = _made_whole(project, baseline, finding, fix, code,
                                    COMPANION_CODES.get(finding.code, COMPANION_CODES[None]))
                if whole is not None:
                    fix, reason = whole, None
            if reason is None:
                kept.append(fix)
            else:
                log.info("%s not offered: %s", fix.title, reason)
                refusals.append(f"{_fix_name(fix.title)} {reason}")
        rewrites = kept
    rewrites = [fix for fix in rewrites if _within_cells(project, fix)]
    if rewrites and not any(f.preferred for f in rewrites):
        safe = [i for i, f in enumerate(rewrites) if f.safe]
        if safe:
            rewrites[safe[0]] = replace(rewrites[safe[0]], preferred=True)
    disable = disable_for_line.fix(model, finding.span, finding.code) if finding.code != "PAL000" else None
    fixes = tuple([*rewrites, *([disable] if disable is not None else [])])
    if rewrites:
        return fixes, None
    reason = "; ".join(dict.fromkeys(refusals)) or NO_FIX_REASONS.get(finding.code, NO_FIX_REASON)
    return fixes, reason


def _outside_elided(project, model, rewrites: list[Fix], refusals: list[str]) -> list[Fix]:
    """The rewrites that leave the inside of every big data literal alone (`edits.into_elided`)."""
    from .edits import into_elided

    kept = []
    for fix in rewrites:
        paths = {os.path.abspath(e.path) for e in fix.edits}
        try:
            into = any(into_elided(model.text if path == model.path else project.text(path),
                                   [e for e in fix.edits if os.path.abspath(e.path) == path]) for path in paths)
        except (OSError, ValueError):
            into = True
        if into:
            log.info("%s not offered: it would edit a data literal of more than 4,096 values", fix.title)
            refusals.append(f"{_fix_name(fix.title)} it would edit inside a data literal of more than 4,096 values")
        else:
            kept.append(fix)
    return kept


def _made_whole(project, baseline, finding: Finding, fix: Fix, code: str, codes: tuple) -> Fix | None:
    """`fix` joined to a fix of the `code` finding it adds, verified; where each such join still adds one other
    finding of `codes` (a barrier moved into an interpreted kernel: PAL002, then PAL006), joined to a fix of
    that one too (two companions in a row, no more)."""
    from .companion import completed
    from .verify import added_code, check_fix

    joins = completed(project, baseline, finding, fix, code)
    for whole in joins:
        if check_fix(project, baseline, finding, whole) is None:
            return whole
    for whole in joins:
        second = added_code(check_fix(project, baseline, finding, whole))
        if second in codes and second not in (code, finding.code):
            done = next((w for w in completed(project, baseline, finding, whole, second)
                         if check_fix(project, baseline, finding, w) is None), None)
            if done is not None:
                return done
    return None


# Why a finding gets no rewrite when no builder said more (the rule pages' "No fix" paragraphs).
NO_FIX_REASON = "no rewrite that keeps the kernel's meaning is known for this code"
NO_FIX_REASONS = {
    "PAL000": "the file does not parse: only you know what was meant",
    "PAL003": "this backend has no global semaphore, and moving the kernel to another backend is no rewrite "
              "that keeps its meaning",
    "PAL005": "which index is meant is not known (no axis matches the dimension, or there are too many indices)",
    "PAL006": "the semaphore is used as a barrier, and no rewrite to a barrier keeps the kernel's meaning here",
    "PAL008": "which kernel this semaphore belongs in is not known",
}


def _fix_name(title: str) -> str:
    """`Use a global semaphore (...)` of `pallas-lsp (PAL001): Use a global semaphore (...)`."""
    return title.split("): ", 1)[-1] + ":"


def _within_cells(project, fix: Fix) -> bool:
    """A notebook's fix is made in its cells: one that reaches across a cell boundary, or into a
    blanked magic line, is not offered (as ruff does not apply a fix that spans cells)."""
    from ..analysis.notebooks import is_notebook

    for path in {e.path for e in fix.edits if is_notebook(e.path)}:
        try:
            notebook = project.notebook_of(path)
        except OSError:
            return False
        if notebook is not None and notebook.edited([e for e in fix.edits if e.path == path]) is None:
            log.info("%s not offered: it spans notebook cells", fix.title)
            return False
    return True


# Findings on a get_global whose buffer the get_global fixes move elsewhere: not a semaphore
# (PAL001), in an interpreted kernel (PAL002), in a kernel whose backend cannot lower it (PAL003).
GET_GLOBAL_CODES = ("PAL001", "PAL002", "PAL003")


# Fixes built from the finding itself (its facts, or the node at its span), by rule code.
FINDING_FIXES = {"PAL001": ("mapped_scratch",), "PAL004": ("hoist_out_of_cond", "one_block_grid", "one_semaphore_array"),
                 "PAL005": ("index_semaphore", "drop_src_sem", "semaphore_array_shape", "barrier_slot"),
                 "PAL006": ("barrier_as_scratch", "semaphore_as_barrier", "semaphore_wait_count"),
                 "PAL007": ("run_scoped_to_get_global", "run_scoped_local"),
                 "PAL008": ("semaphore_allocated_by_caller", "semaphore_dict_output_allocated_by_caller", "semaphore_out_of_out_type", "semaphore_out_spec",
                            "pass_semaphore_ref", "get_global_into_kernel", "closed_over_get_global",
                            "class_attribute_get_global"),
                 "PAL009": ("signal_back",), "PAL012": ("reuse_buffer",), "PAL010": ("drop_src_sem", "semaphore_view"), "PAL011": ("collective_id_below_internal",),
                 "PAL013": ("regular_semaphore", "wait_on_copy", "barrier_wait_call", "operand_counter_to_get_global"),
                 "PAL014": ("semaphore_view",), "PAL015": ("drop_src_sem", "dma_semaphore"), "PAL017": ("drop_src_sem",),
                 "PAL018": ("own_memory_space",), "PAL019": ("scratch_workspace_as_output",), "PAL020": ("fields_into_grid_spec",),
                 "PAL023": ("give_collective_id",), "PAL024": ("smem_to_vmem",),
                 "PAL025": ("gpu_interpreter_params",), "PAL026": ("tpu_params_to_gpu",),
                 "PAL016": ("interpret_true_for_semaphores",), "PAL027": ("struct_to_memory_space",), "PAL028": ("alloc_semaphore_to_get_global",),
                 "PAL029": ("semaphore_list_to_array",)}


def has_rewrite(fixes: tuple[Fix, ...]) -> bool:
    return any(f.kind == "rewrite" for f in fixes)


def _get_global_at(project, model, finding: Finding) -> ast.Call | None:
    if finding.code not in GET_GLOBAL_CODES:
        return None
    call = finding.facts.get("get_global")
    if call is not None and finding.facts.get("model") is model:
        return call
    from ..analysis.kernels import get_global_calls

    for call in get_global_calls(project, model):
        if model.source.span(call) == finding.span:
            return call
    return None


def _get_global_value(project, model, call: ast.Call, code: str):
    """What the finding's get_global asked for, as the fixes see it (None: several possibilities)."""
    from ..analysis.evaluate import as_memtype
    from ..analysis.kernels import get_global_argument
    from ..analysis.values import OneOf

    argument = get_global_argument(call)
    if argument is None:
        return None
    value = project.evaluator.value(model, argument)
    if code == "PAL001":
        from ..rules.pal001_get_global_not_semaphore import problem

        options = value.options if isinstance(value, OneOf) else (value,)
        return next((as_memtype(option) for option in options if problem(option)), None)
    return None if isinstance(value, OneOf) else as_memtype(value)


def _built(name: str, make, refusals: list[str] | None = None) -> Fix | None:
    """`make()`'s fix, or None when it cannot be made safely (logged, and the reason added to
    `refusals`; never an error to the user)."""
    from .kernel_edits import CannotFix

    try:
        return make()
    except CannotFix as reason:
        log.debug("%s not offered: %s", name, reason)
        if refusals is not None:
            refusals.append(str(reason))
    except RecursionError:  # valid code nested deeper than LibCST can walk: no fix, the finding stays
        log.info("%s not offered: the statement is nested too deeply", name)
    except Exception:  # a fix must never cost the user their diagnostics
        log.exception("building %s failed", name)
    return None


def _finding_rewrites(project, model, finding: Finding, refusals: list[str] | None = None) -> list[Fix]:
    import importlib

    if not finding.facts:  # rebuilt from an editor's diagnostic: the analysis knows the rest
        from ..engine import analyze

        same = [f for f in analyze(project, finding.path, model.text, codes={finding.code})
                if (f.span, f.message) == (finding.span, finding.message)]
        if not same:
            return []
        finding = same[0]
    fixes = []
    for name in FINDING_FIXES[finding.code]:
        builder = importlib.import_module(f"{__name__}.{name}")
        found = _built(name, lambda: builder.fix(project, model, finding), refusals)
        if found is not None:
            fixes.append(found)
    return fixes


def _get_global_rewrites(project, model, call: ast.Call, finding: Finding,
                         refusals: list[str] | None = None) -> list[Fix]:
    # Imported here, not at start-up: LibCST costs ~0.25 s of the server's cold start, and a file
    # without findings never needs it.
    from . import (
        allocate_as_scratch,
        barrier_array_scratch,
        barrier_semaphore,
        buffer_per_call,
        decorator_scratch,
        default_argument_scratch,
        drop_collective_axes,
        enclosing_run_scoped,
        helper_tuple_scratch,
        keep_as_value,
        optional_scratch,
        outside_kernel,
        pass_as_input,
        partial_keyword_scratch,
        pass_as_operand,
        run_compiled,
        run_scoped_allocation,
        scratch_comprehension,
        subclass_scratch,
        triton_to_mosaic_gpu,
        use_global_semaphore,
        warp_hoist,
        workspace_as_output,
    )

    value = _get_global_value(project, model, call, finding.code)
    fixes: list[Fix] = []
    # run_scoped_allocation before scratch: it is offered for a plgpu.kernel only where the buffer is asked for in an
    # `if` of the body, which scratch would allocate for every launch, the branch taken or not.
    # optional_scratch and helper_tuple_scratch first: they keep the body's own shape (its `acc=None` parameter, the
    # names a helper's buffers are unpacked into) where the others would thread a new parameter past it.
    moving = (optional_scratch, helper_tuple_scratch, default_argument_scratch, decorator_scratch,
              partial_keyword_scratch, enclosing_run_scoped, workspace_as_output, pass_as_input, pass_as_operand,
              run_scoped_allocation, buffer_per_call, allocate_as_scratch, subclass_scratch)
    if scratch_comprehension.many_items(project, model, call):
        # Each item is a buffer of its own: one parameter in place of the call would make them one buffer.
        from . import helper_comprehension_scratch

        moving = (barrier_array_scratch, scratch_comprehension, helper_comprehension_scratch)
    for builder in (barrier_semaphore, *moving, use_global_semaphore, drop_collective_axes, outside_kernel, warp_hoist, keep_as_value):
        found = _built(builder.__name__, lambda: builder.fix(project, model, call, value, finding.code), refusals)
        if found is not None:
            fixes.append(found)
    if not fixes:  # a helper returning the get_global to several callers: each allocates what it returns
        from . import helper_returns_type, helper_type_scratch

        for helper_fix in (helper_returns_type, helper_type_scratch):
            found = _built(helper_fix.__name__, lambda: helper_fix.fix(project, model, call, value, finding.code),
                           refusals)
            if found is not None:
                fixes.append(found)
                break
    mosaic = _built(triton_to_mosaic_gpu.__name__, lambda: triton_to_mosaic_gpu.fix(project, model, call, finding),
                    refusals)
    if mosaic is not None:
        fixes.append(mosaic)
    compiled = _built(run_compiled.__name__, lambda: run_compiled.fix(project, model, call, value, finding.code),
                      refusals)
    if compiled is not None and run_compiled.debugging_switch(project, model, call):
        fixes.append(compiled)  # a switch that runs the kernel on the CPU: a fix that keeps it there comes first
    elif compiled is not None:  # after the safe fixes, before the unsafe ones: compiled, the kernel means the same
        fixes.insert(max((n + 1 for n, f in enumerate(fixes) if f.safe), default=0), compiled)
    return fixes
