"""What every rule gets: the project, the module being checked, and shared per-module facts."""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding, Related, Span
from .model import ModuleModel
from .project import Project


@dataclass
class RuleContext:
    project: Project
    model: ModuleModel

    @property
    def path(self) -> str:
        return self.model.path

    def span(self, node, model: ModuleModel | None = None) -> Span:
        return (model or self.model).source.span(node)

    def related(self, model: ModuleModel, node, message: str) -> Related:
        return Related(model.path, model.source.span(node), message)

    def finding(self, rule, node, message: str, related: tuple[Related, ...] = ()) -> Finding:
        return Finding(self.path, self.span(node), rule.CODE, rule.NAME, rule.SEVERITY, message, related)
