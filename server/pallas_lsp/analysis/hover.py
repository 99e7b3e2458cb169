"""What the analysis inferred at a position, in words, for hovers. No LSP types."""

from __future__ import annotations

import ast
import os
import re

from ..dtypes import short_dtype
from .markdown import code_block, code_span, markdown_text
from .evaluate import as_memtype
from .kernel_args import NOT_KNOWN, KernelParam, body_first_line, param_at, parameter_at, parameters_of_module
from .kernels import get_global_argument, get_global_calls
from .project import Project
from .values import Api, MemType, OneOf, ShapeDtype, Value


def describe_value(value: Value, rejected: bool | None = None) -> str:
    """What get_global is given, in words. `rejected`: whether a finding stands on the call (None: not
    known); a semaphore is "what get_global is for" only where nothing is reported on the call."""
    value = as_memtype(value)
    if isinstance(value, MemType):
        picture = value.picture or f"{value.source} (memory space {value.space}, shape or dtype not known statically)"
        if value.is_gpu_global_semaphore:
            verdict = ("a Mosaic GPU global semaphore: what get_global is for" if rejected is False
                       else "a Mosaic GPU global semaphore, the type get_global takes")
        else:
            verdict = "not a Mosaic GPU REGULAR semaphore: JAX rejects it (PAL001)"
        return f"{code_span(picture)}: {verdict}"
    if isinstance(value, ShapeDtype):
        return f"{code_span(value.source)}: an array description, not a memory-space type (PAL001)"
    if isinstance(value, OneOf):
        return "one of, depending on the call site:\n" + "\n".join(f"- {describe_value(o, rejected)}"
                                                                     for o in value.options)
    if isinstance(value, Api):
        return code_span(value.name)
    return "not known statically"


# What a trace found each kernel body's refs to be (the trace worker's `kernel_refs`), for one file:
# (1-based first line of the body, parameter name) -> JAX's avals.
TracedRefs = dict[tuple[int, str], list[str]]


def hover_text(project: Project, path: str, text: str, line: int, column: int, traced=(),
               traced_refs: TracedRefs | None = None, findings=None) -> str | None:
    """Markdown for a hover at a 0-based line and code-point column, or None if nothing is known there.
    `traced`: the kernel records of the document's last trace (their figures replace the estimate);
    `traced_refs`: JAX's types of kernel parameters from a trace still current (shown instead of the
    inferred ones); `findings`: a function giving the document's findings (the engine's), asked only
    for a hover on a get_global, so that the hover says what is reported there."""
    from .incremental import model_for_lines

    with model_for_lines(project, path, text, line, line) as model:
        site = _get_global_at(project, model, line, column)
        if site is None:
            return _hover_text(project, model, line, column, traced, traced_refs)
    if site is False:
        return None
    # Asked once the model of these lines is left: the findings are a whole analysis's (or kept ones).
    span, segment, value = site
    reported = _on_call(findings(), span) if findings is not None else None
    text = f"**pl.get_global** of {code_span(segment)}\n\nInferred: {describe_value(value, None if reported is None else bool(reported))}"
    if reported:
        names = ", ".join(dict.fromkeys(f"{f.code} {f.name} ({f.severity})" for f in reported))
        text += f"\n\nThis call is reported: {names}."
    return text


def _get_global_at(project: Project, model, line: int, column: int):
    """(the call's span, its argument's text, the argument's value) for the get_global call at the
    position; False for one with no argument to describe; None where there is none."""
    for call in get_global_calls(project, model):
        span = model.source.span(call)
        if not (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column):
            continue
        argument = get_global_argument(call)
        if argument is None:
            return False
        return span, model.segment(argument), project.evaluator.value(model, argument)
    return None


def _on_call(findings, span) -> list:
    """The findings whose range overlaps `span` (the get_global call), errors and warnings."""
    return [f for f in findings if f.severity in ("error", "warning")
            and (f.span.line, f.span.column) <= (span.end_line, span.end_column)
            and (span.line, span.column) <= (f.span.end_line, f.span.end_column)]


def _hover_text(project: Project, model, line: int, column: int, traced=(),
                traced_refs: TracedRefs | None = None) -> str | None:
    """The hover of a position on no get_global call: a kernel parameter, or a launch's budget."""
    if traced_refs:
        arg = parameter_at(model, line, column, lambda node: (body_first_line(model, node), node.arg) in traced_refs)
        if arg is not None:
            return describe_traced(arg.arg, traced_refs[body_first_line(model, arg), arg.arg],
                                   parameters_of_module(project, model).get(id(arg), []))
    params = param_at(project, model, line, column)
    if params:
        return describe_params(params)
    return _budget_hover(project, model, line, column, traced)


def _short_aval(aval: str) -> str:
    """`Ref<default>{float32[8,128]}` -> `f32[8,128]`; `Ref<smem>{float32[128]}` -> `f32[128] smem`."""
    found = re.fullmatch(r"Ref<([^>]*)>\{([A-Za-z0-9_]+)\[([^\]]*)\]\}", aval)
    if found is None:
        return aval
    space, dtype, shape = found.groups()
    return f"{short_dtype(dtype)}[{shape}]" + ("" if space == "default" else f" {space}")


def describe_traced(name: str, avals: list[str], params: list[KernelParam]) -> str:
    """JAX's own type of a kernel parameter from the last trace, marked as traced; the roles inferred."""
    head = code_block(f"{name}: {avals[0]}") if len(avals) == 1 else f"{code_span(name)}: " + ", ".join(
        code_span(a) for a in avals)
    lines = [f"- {p.describe()}" for p in params]
    return "\n\n".join([head, "traced by JAX (until the file changes)", *(["\n".join(lines)] if lines else [])])


def _budget_hover(project: Project, model, line: int, column: int, traced=()) -> str | None:
    """The shared-memory estimate of the kernel launched (or built) at the position."""
    from .kernel_model import budget_sites

    for node, kernel in budget_sites(project, model):
        span = model.source.span(node)
        if (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column):
            return describe_budget(kernel.shared_memory, traced_summary(kernel, traced))
    return None


def traced_summary(kernel, traced) -> str | None:
    """`SMEM 66,568 / 232,448 B (traced)`: what JAX's `_launch` sized for this kernel in the last trace
    (a record whose first body line lies in this kernel's body), or None if no trace saw it."""
    body = kernel.entry.body
    if body is None or not traced:
        return None
    span = body.model.source.span(body.node)
    path = os.path.realpath(body.model.path)
    for record in traced:
        location = record.get("location") or {}
        if record.get("launch_smem_bytes") is None or os.path.realpath(location.get("path") or "") != path:
            continue
        if span.line + 1 <= location.get("line", 0) <= span.end_line + 1:
            budget = kernel.shared_memory
            limit = f"{budget.max_smem_bytes:,}" if budget.max_smem_bytes is not None else "?"
            text = f"SMEM {record['launch_smem_bytes']:,} / {limit} B"
            columns = record.get("tmem_cols", 0) + record.get("tmem_collective_cols", 0)
            if columns:
                text += f" · TMEM {columns} cols asked"
            return text + " (traced)"
    return None


def describe_budget(budget, traced: str | None = None) -> str:
    """`SMEM 196,608 / 232,448 B` and what it counts, as JAX's resource estimator computes it; after a
    trace, the traced figure first."""
    lines = [f"**{traced}** (Mosaic GPU shared memory, as JAX computed it in the last trace)", "",
             f"- estimate: {budget.summary()}"] if traced else [
        f"**{budget.summary()}** (Mosaic GPU shared memory, as JAX's resource estimator computes it)", ""]
    lines.append(f"- scratch and reductions, each buffer rounded up to {budget.alignment:,} B; "
                 f"{budget.barriers} barrier{'s' if budget.barriers != 1 else ''}")
    if budget.max_smem_bytes is not None:
        lines.append(f"- limit `max_smem_bytes` = {budget.max_smem_bytes:,} B, read from {code_span(budget.limit_source)}")
    if budget.tmem_requested_cols:
        lines.append(f"- TMEM: {budget.tmem_requested_cols} columns asked for, {budget.tmem_cols} allocated "
                     f"(a power of two), limit {budget.tmem_max_cols}")
    if budget.unknown:
        lines.append("- not known statically (the figures are lower bounds): " + "; ".join(map(code_span, budget.unknown)))
    return "\n".join(lines)


def budget_lenses(project: Project, path: str, text: str, traced=()) -> list[tuple[int, str]]:
    """(0-based line, title) of a code lens on each launch of a Mosaic GPU kernel that allocates anything
    (or something not known statically): its estimate, or after a trace the traced figure, marked so.
    A kernel without scratch gets none (hover says 0)."""
    from .kernel_model import budget_sites

    model = project.model(path, text)
    allocates = lambda kernel: bool(kernel.shared_memory.smem_bytes or kernel.shared_memory.unknown)  # noqa: E731
    return sorted({(model.source.span(node).line, traced_summary(kernel, traced) or kernel.shared_memory.summary())
                   for node, kernel in budget_sites(project, model, allocates)})


def describe_params(params: list[KernelParam]) -> str:
    """`x_ref: Ref<default>{float32[128]}` and where it comes from; one line per entry point using the
    body. Where the call sites of a launch disagree (`float32[?,128]`), what each gives, and where."""
    first = params[0]
    pictures = {p.picture for p in params}
    head = code_block(f"{first.name}: {first.picture}") if len(pictures) == 1 else f"**{first.name}**"
    parts = [head]
    seen = [item for p in params for item in p.seen if item[0] != NOT_KNOWN]
    unknown = [where for p in params for picture, where in p.seen if picture == NOT_KNOWN]
    if len({picture for picture, _ in seen}) > 1:
        parts.append("seen at the call sites: " + ", ".join(f"{code_span(picture)} ({markdown_text(where)})" for picture, where in seen))
    if unknown:
        parts.append("besides the call sites passing arrays not known statically: " + markdown_text(", ".join(unknown)))
    named = len({p.name for p in params}) > 1  # `*refs`: each ref JAX passes it (`refs[0]`, ...)
    lines = [f"- {code_span(p.name) + ': ' if named else ''}{p.describe()}"
             + ("" if len(pictures) == 1 else f": {code_span(p.picture)}") for p in params]
    parts.append("\n".join(lines))
    return "\n\n".join(parts)


def inlay_hints(project: Project, path: str, text: str, first_line: int, last_line: int,
                traced_refs: TracedRefs | None = None) -> list[tuple[int, int, str, str]]:
    """(line, column, label, tooltip) after each unannotated kernel parameter in the line range.

    Labels are short (`: f32[4,128]`, `: f32[128] smem`: the memory space only where it is not
    `default`) so that editors do not cut them (VS Code shows 43
    characters by default); the tooltip has JAX's full picture and where it comes from."""
    from .incremental import model_for_lines

    with model_for_lines(project, path, text, first_line, last_line) as model:
        return _inlay_hints(project, model, first_line, last_line, traced_refs)


def _inlay_hints(project: Project, model, first_line: int, last_line: int,
                 traced_refs: TracedRefs | None = None) -> list[tuple[int, int, str, str]]:
    hints = []
    traced_here = set()
    for node in ast.walk(model.tree) if traced_refs else ():
        if isinstance(node, ast.arg) and node.annotation is None and (body_first_line(model, node), node.arg) in traced_refs:
            span = model.source.span(node)
            if first_line <= span.line <= last_line:
                avals = traced_refs[body_first_line(model, node), node.arg]
                traced_here.add(id(node))
                hints.append((span.line, span.column + len(node.arg), ": " + " | ".join(map(_short_aval, avals)) +
                              " (traced)", "traced by JAX (until the file changes): " + ", ".join(avals)))
    for params in parameters_of_module(project, model).values():
        node = params[0].node
        if node.annotation is not None or id(node) in traced_here:
            continue
        span = model.source.span(node)
        if not first_line <= span.line <= last_line:
            continue
        labels = sorted({p.short for p in params} - {""})
        if not labels:
            continue  # nothing known statically: no hint rather than `?`
        label = ": " + " | ".join(labels)
        tooltip = "\n".join(f"{p.picture}: {p.describe()}" + "".join(
            f"\n  {picture} from the call at {where}" for picture, where in p.seen) for p in params)
        hints.append((span.line, span.column + len(node.arg), label, tooltip))
    hints.sort()
    return hints
