"""Which module-level names of a file get a "Trace kernel" code lens: every launch.

A launch is a name that runs a Pallas kernel when called: the kernel itself (a kernel decorator, an
assignment such as `add = plgpu.kernel(body, ...)`), a function whose code calls one, or a wrapper
calling such a function of the same module (intent.py, from the kernel model: names resolved as
everywhere else, no guessing from spellings). Its arguments may be unknown: the lens then traces
without them, and the answer (`ArgsNotFound`, with `suggested_args`) is the client's cue to ask
the user. A function that only builds a kernel (a factory) gets a lens only where its arguments
are known.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..source_text import split_lines
from .intent import BUILDS, launch_targets
from .targets import ArgSpecError, ArgsNotFound, TargetArgs, TargetNotFound, resolve_args


@dataclass(frozen=True)
class EntryFunction:
    name: str
    line: int  # 0-based: the first decorator or the def/assignment line
    column: int
    end_column: int
    args: TargetArgs | None  # None: not found; tracing asks for them


def entry_functions(project, path: str, text: str) -> list[EntryFunction]:
    found = []
    lines = split_lines(text)
    for target in launch_targets(project, path, text):
        try:
            args = resolve_args(text, target.name)
        except (ArgSpecError, ArgsNotFound, TargetNotFound, SyntaxError):
            args = None
        if target.how == BUILDS and (args is None or args.source == "no parameters"):
            continue  # a factory such as `def target(): return kernel, args`; a comment opts it in
        line = target.line
        indent = len(lines[line]) - len(lines[line].lstrip()) if line < len(lines) else 0
        found.append(EntryFunction(target.name, line, indent, len(lines[line]) if line < len(lines) else 0, args))
    return found
