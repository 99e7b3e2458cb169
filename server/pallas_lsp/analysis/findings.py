"""What the analysis returns: plain data, no LSP types, so the CLI, the server and tests share it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Span:
    """A source range: 0-based lines, 0-based columns counted in code points (not bytes)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Related:
    """A second location that explains a finding (for example what makes a kernel interpreted)."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    path: str
    span: Span
    code: str
    name: str
    severity: str  # "error" | "warning" | "info"
    message: str
    related: tuple[Related, ...] = field(default=())

    def sort_key(self) -> tuple:
        return (self.path, self.span, self.code, self.message)
