"""What the analysis inferred at a position, in words, for hovers. No LSP types."""

from __future__ import annotations

from .evaluate import as_memtype
from .kernels import get_global_argument, get_global_calls
from .project import Project
from .values import Api, MemType, OneOf, ShapeDtype, Value


def describe_value(value: Value) -> str:
    value = as_memtype(value)
    if isinstance(value, MemType):
        picture = value.picture or f"{value.source} (memory space {value.space}, shape or dtype not known statically)"
        verdict = ("a Mosaic GPU global semaphore: what get_global is for" if value.is_gpu_global_semaphore
                   else "not a Mosaic GPU REGULAR semaphore: JAX rejects it (PAL001)")
        return f"`{picture}`: {verdict}"
    if isinstance(value, ShapeDtype):
        return f"`{value.source}`: an array description, not a memory-space type (PAL001)"
    if isinstance(value, OneOf):
        return "one of, depending on the call site:\n" + "\n".join(f"- {describe_value(o)}" for o in value.options)
    if isinstance(value, Api):
        return f"`{value.name}`"
    return "not known statically"


def hover_text(project: Project, path: str, text: str, line: int, column: int) -> str | None:
    """Markdown for a hover at a 0-based line and code-point column, or None if nothing is known there."""
    model = project.model(path, text)
    for call in get_global_calls(project, model):
        span = model.source.span(call)
        inside = (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)
        if not inside:
            continue
        argument = get_global_argument(call)
        if argument is None:
            return None
        value = project.evaluator.value(model, argument)
        return f"**pl.get_global** of `{model.segment(argument)}`\n\nInferred: {describe_value(value)}"
    return None
