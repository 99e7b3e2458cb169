"""A document's first diagnostics before its importers' kernels are modelled.

Opening a kernel file of a big package, most of the first analysis went into the kernels of the
workspace modules importing it (a helper here may run in a kernel launched there): on jla's
`ops/mosaic_gpu/attention.py`, eleven more modules modelled, half its CPU. The server shows what the
file's own kernels give first, then the rest (bench/lsp_first_timeline.py).

While a `Deferral` is the project's (`Project.importers` answers no importer meanwhile), every answer
read from that missing list is marked: it read `NOT_SEARCHED` (see reads.py). When the analysis ends,
`reads.forget(NOT_SEARCHED)` drops each such answer, and every answer read from one, in every memo:
the evaluator's answers and kernel models that would be wrong without the importers are found again
by the next analysis, and the rules whose findings read one of them (directly, or through another
rule's findings: the rule context keeps them in a memo meanwhile) are the incomplete ones. What the
others found is exactly what the whole analysis finds of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import reads

NOT_SEARCHED = "<importers not searched yet>"


@dataclass
class Deferral:
    """One first pass: whether an importers' search was left out, and the rule contexts it ran."""

    used: bool = False
    contexts: list = field(default_factory=list)
    # (importer's path, whether its kernels were asked for with own-module call sites only), in order
    importers: dict[tuple[str, bool], None] = field(default_factory=dict)

    def left_out(self, paths, own_module_only: bool) -> None:
        """`Project.importers` answered nothing where the import index knows these importers."""
        self.used = True
        reads.note(NOT_SEARCHED)
        self.importers.update(((path, own_module_only), None) for path in paths)

    def complete_codes(self) -> set[str]:
        """Once `finish`ed: the codes of the rules whose findings read nothing left out."""
        return {code for ctx in self.contexts for code in ctx.found}

    def finish(self) -> None:
        """Forget every answer that read what was left out (the incomplete rules' findings too)."""
        if self.used:
            reads.forget(NOT_SEARCHED)


def model_importer_kernels(project, path: str, importer: str, own_module_only: bool) -> None:
    """One step of what a first pass left out, between two requests of the analysis thread: the kernel
    models of one importer of `path`, searched as the analysis of `path` searches them (with own-module
    call sites only: `RuleContext.kernels_here_and_in_importers`), kept for it. The whole analysis after
    the steps finds them done, so a hover or inlay hints asked meanwhile wait for one step, not for all."""
    from .kernel_model import kernel_models

    project.new_analysis()
    with project.pinning(path):
        model = project.model(importer)
        if own_module_only:
            with project.evaluator.own_module_call_sites():
                kernel_models(project, model)
        else:
            kernel_models(project, model)
