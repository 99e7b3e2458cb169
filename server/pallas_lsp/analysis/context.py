"""What every rule gets: the project, the module being checked, and shared per-module facts."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field

from . import reads
from .findings import Finding, Related, Span
from .model import ModuleModel
from .project import Project

log = logging.getLogger(__name__)


@dataclass
class RuleContext:
    project: Project
    model: ModuleModel
    # Each rule's findings on this module, by code, once run (the engine's, or another rule's asking first).
    found: dict[str, list[Finding]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.project.deferral is not None:  # a first pass: each rule's findings kept with what they read
            self.found = reads.Memo()
            self.project.deferral.contexts.append(self)

    @property
    def path(self) -> str:
        return self.model.path

    def span(self, node, model: ModuleModel | None = None) -> Span:
        return (model or self.model).source.span(node)

    def related(self, model: ModuleModel, node, message: str) -> Related:
        return Related(model.path, model.source.span(node), message)

    def finding(self, rule, node, message: str, related: tuple[Related, ...] = (), facts: dict | None = None,
                severity: str | None = None) -> Finding:
        return Finding(self.path, self.span(node), rule.CODE, rule.NAME, severity or rule.SEVERITY, message, related,
                       facts=facts or {})

    @contextlib.contextmanager
    def isolated(self, rule, node=None, model: ModuleModel | None = None):
        """Around one kernel's or one call's part of a rule (its loop body, `yield`s included): an exception
        there, a bug or input nothing foresaw, costs the findings of that part only. It is logged with where
        it happened, and the rule goes on with the next part; the engine isolates whole rules the same way."""
        try:
            yield
        except RecursionError:
            log.warning("%s: %s gave up on deeply nested code", self._where(node, model), rule.CODE)
        except Exception as error:
            log.error("%s: %s failed here (%s: %s); the file's other findings are kept", self._where(node, model),
                      rule.CODE, type(error).__name__, error, exc_info=True)

    def _where(self, node, model: ModuleModel | None) -> str:
        model = model or self.model
        return f"{model.path}:{model.source.span(node).line + 1}" if node is not None else model.path

    def findings_of(self, rule) -> list[Finding]:
        """`rule`'s findings on this module, run once per check: a rule whose error JAX meets only after
        another's (a lowering failure after a tracing one) asks whether that one is reported first."""
        found = self.found.get(rule.CODE)
        if found is None:
            if isinstance(self.found, reads.Memo):  # a first pass (`first_pass.py`)
                return reads.kept(self.found, rule.CODE, lambda: self._run(rule))
            found = self.found[rule.CODE] = self._run(rule)
        return found

    def _run(self, rule) -> list[Finding]:
        found: list[Finding] = []
        try:
            found.extend(rule.check(self))
        except RecursionError:
            log.warning("%s: %s gave up on deeply nested code", self.path, rule.CODE)
        except Exception as error:
            log.error("%s: %s failed (%s: %s); the file's other findings are kept", self.path, rule.CODE,
                      type(error).__name__, error, exc_info=True)
        return found

    def reported_on(self, kernel, rules) -> bool:
        """Whether one of `rules` reports something in `kernel` (its facts name the kernel or its entry point)."""
        def names(finding) -> bool:
            facts = finding.facts
            return facts.get("kernel") is kernel or facts.get("entry") is kernel.entry or getattr(
                facts.get("kernel"), "entry", None) is kernel.entry
        return any(names(finding) for rule in rules for finding in self.findings_of(rule))

    def may_run_scoped_semaphore(self) -> bool:
        """A cheap test before building kernel models: only a `run_scoped` call (under any alias) in a
        module that names a semaphore type can allocate a semaphore through `run_scoped`."""
        from .kernels import pallas_calls

        return "emaphore" in self.model.text and bool(pallas_calls(self.project, self.model, "pl.run_scoped"))

    def calls_any(self, apis) -> bool:
        """Does this module call any of `apis` (canonical names, under any alias: `pallas_calls`)? A kernel's
        semaphore ops and copies are such calls, kept with their own module (`result_uses.SEMAPHORE_OP_APIS`,
        `COPY_APIS`): a module calling none has none of them, whichever kernel, here or in an importer, runs
        its code. Its text mentioning a word ("async" in a checkpoint setting, "decrement" in a comment) is less."""
        from .kernels import pallas_calls

        return any(pallas_calls(self.project, self.model, api) for api in apis)

    def kernels_reaching(self):
        """(KernelModel, GetGlobalSite) for every get_global of this module that a kernel reaches."""
        from .kernel_model import models_reaching

        key = "kernels-reaching"
        found = self.model.eval_cache.get(key)
        if found is None:
            with reads.frame():
                found = self.model.eval_cache[key] = models_reaching(self.project, self.model)
        return found

    def kernels(self):
        """Kernel models of this module's entry points plus those of other modules reaching its get_globals."""
        from .kernel_model import kernel_models

        found = {id(k): k for k in kernel_models(self.project, self.model)}
        found.update((id(k), k) for k, _ in self.kernels_reaching())
        return list(found.values())

    def kernels_here_and_in_importers(self, importers: bool = True):
        """Kernel models of this module's entry points and of the workspace modules importing it: code here
        (a helper) may run in a kernel launched there. For rules about any semaphore, not only get_global's.
        `importers=False`: this module's alone, where the rule knows nothing here can be reported of one
        launched there (searching every importer's entry points is most of what these rules cost).

        An importer's kernels are searched with call sites in each function's own module only
        (`Evaluator.own_module_call_sites`); this module's own kernels, and an importer's kernel that
        reaches one of its get_globals (`kernels_reaching`), with every call site. So a kernel launched in
        an importer whose body or factory reaches it only as an argument from a third module's call
        (`launch(body)` there, `launch(here.body)` elsewhere) is not found here."""
        from .kernel_model import kernel_models

        kernels = {_entry_key(k): k for k in self.kernels()}  # each module's models are cached with its own text
        if not importers or not self.model.functions:
            # No def or lambda here: no code of this module runs in a kernel (a package's `__init__.py`
            # that re-exports names, imported by every test: modelling each importer's kernels cost a
            # third of a check of jax's Pallas tests). The rules report only what runs here.
            return list(kernels.values())
        with self.project.evaluator.own_module_call_sites():
            for other in self.project.importers(self.model):
                for kernel in kernel_models(self.project, other):
                    kernels.setdefault(_entry_key(kernel), kernel)
        return list(kernels.values())

    def entry_related(self, kernel) -> Related:
        entry = kernel.entry
        return self.related(entry.model, entry.node, f"kernel entry point ({entry.api}): {kernel.backend_reason}")


def _entry_key(kernel) -> tuple[int, int]:
    """The same entry point modelled by the full evaluation and by the importers' search is one kernel."""
    return id(kernel.entry.node), id(kernel.entry.kernel.node)
