"""The analysis core: source text and an environment in, one kernel model out. No LSP types here,
and no rule: the rules read this model, and the engine (`pallas_lsp.engine`) runs them over it."""

from __future__ import annotations

from .findings import Finding, Related, Span
from .project import Project

__all__ = ["Finding", "Related", "Span", "Project"]
