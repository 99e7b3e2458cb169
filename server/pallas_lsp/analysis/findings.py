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
class TextEdit:
    """Replace `span` of the file at `path` with `new_text` (code-point columns, like every Span)."""

    path: str
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """An edit for a finding, built on request (`fixes.fixes_for`). `applicability` is "safe"
    (fix-all applies it), "unsafe" (only with --unsafe-fixes) or "display_only" (offered in the editor, never
    applied by fix-all, as ruff's DisplayOnly: it changes what a kernel JAX accepts does)."""

    title: str
    edits: tuple[TextEdit, ...]
    applicability: str = "safe"
    preferred: bool = False
    kind: str = "rewrite"  # "rewrite" changes the code; "noqa" silences the finding (never part of fix-all)

    @property
    def safe(self) -> bool:
        return self.applicability == "safe"

    @property
    def automatic(self) -> bool:
        """Does fix-all apply it (with --unsafe-fixes if it is unsafe)?"""
        return self.applicability != "display_only"

    def to_data(self) -> dict:
        """JSON-serialisable, so the server can carry it in `Diagnostic.data` and skip re-analysis."""
        return {"title": self.title, "applicability": self.applicability, "preferred": self.preferred, "kind": self.kind,
                "edits": [{"path": e.path, "span": [e.span.line, e.span.column, e.span.end_line, e.span.end_column],
                           "newText": e.new_text} for e in self.edits]}

    @classmethod
    def from_data(cls, data: dict) -> "Fix":
        edits = tuple(TextEdit(str(e["path"]), Span(*(int(n) for n in e["span"])), str(e["newText"]))
                      for e in data["edits"])
        return cls(str(data["title"]), edits, str(data.get("applicability", "safe")), bool(data.get("preferred")),
                   str(data.get("kind", "rewrite")))


@dataclass(frozen=True)
class Finding:
    path: str
    span: Span
    code: str
    name: str
    severity: str  # "error" | "warning" | "info"
    message: str
    related: tuple[Related, ...] = field(default=())
    # What a fix needs, in-process only (never serialised): "kernel" (a KernelModel: entry point, backend,
    # axes), "get_global" (the ast.Call), "model" (its ModuleModel), "use" (the offending use), ...
    facts: dict = field(default_factory=dict, compare=False, repr=False)
    # Who says so: "pallas-lsp" (the rules, reading the source) or "jax" (JAX itself, on a launch an
    # entry point reached: trace/entry_points.py); `confirmed`: a rule's finding JAX agreed with.
    source: str = "pallas-lsp"
    confirmed: bool = False

    def sort_key(self) -> tuple:
        return (self.path, self.span, self.code, self.message)
