"""Fix (PAL017; PAL005, PAL010 and PAL015 on the same argument): a local TPU copy in a TensorCore kernel loses
its `src_sem=`.

    pltpu.make_async_copy(x, o, sem, src_sem=send)   ->   pltpu.make_async_copy(x, o, sem)

Mosaic TPU gives a copy on one device no source semaphore (jax 0.12 refuses one as it lowers the copy); its
`.wait()` waits for the write, which ends after the read, so the copy waits for the same thing without it
(JAX's SparseCore lowering says so: "pass `src_sem=None` and use `wait()`, which already guarantees completion
of this transfer"). Where the send semaphore is also the subject of another rule's finding (no ref: PAL010, not
indexed: PAL005, REGULAR where `.wait()` waits on it: PAL015), dropping it is what makes the kernel lower; a
repaired send semaphore would still be refused. Not offered where the semaphore is used other than as this
copy's send semaphore (a `pl.semaphore_wait` on it would wait forever), where the descriptor's `.wait_read()` /
`.wait_send()` is called, or where the semaphore is not one of the body's.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.local_copies import local_src_sem, refuses_local_src_sem
from ..analysis.result_uses import _starts
from ..analysis.values import Const
from .kernel_edits import CannotFix, FixBuilder, without_keyword


def fix(project, model, finding):
    facts = finding.facts
    kernel = facts.get("kernel")
    if kernel is None or not refuses_local_src_sem(project, kernel):
        return None
    copies = [(copy, node) for copy in kernel.dma_copies if copy.model is model
              and (node := local_src_sem(project, copy)) is not None]
    copies = [(copy, node) for copy, node in copies if _about(model, finding, copy, node)]
    if len(copies) != 1:
        return None
    copy, node = copies[0]
    if _starts(model, copy.call, ("wait_read", "wait_send")):
        raise CannotFix("the copy's .wait_read() waits on its send semaphore")
    number = isinstance(project.evaluator.value(model, node), Const)  # `src_sem=0`: no semaphore at all
    sem = None if number else _body_semaphore(model, kernel, node)
    if sem is None and not number:
        raise CannotFix("the send semaphore is not one of the kernel body's, whose other uses would be known")
    mine = (copy.call, *copy.starts)
    inside = {id(n) for n in ast.walk(node)}  # `src_sem=src[...]`: the read is this argument (PAL010)
    if sem is not None and any(id(use.node) not in inside and use.node not in mine and use.descriptor is not copy.call
                               for use in sem.uses):  # this copy's own uses (an array's other view as its sem) stay
        raise CannotFix("the send semaphore is used elsewhere too, where nothing would signal it")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    target = file.find_ast(model, copy.call, cst.Call)
    if target is None:
        raise CannotFix("the copy was not found")
    file.rewrite(target, _without_src_sem)
    return builder.fix(f"pallas-lsp ({finding.code}): Drop src_sem from the local copy (its .wait() waits for the "
                       "write, which ends after the read)", "safe", preferred=finding.code == "PAL017")


def _about(model, finding, copy, node) -> bool:
    """Whether `finding` is about this copy's send semaphore."""
    facts = finding.facts
    if finding.code == "PAL017":
        return facts.get("copy") is copy.call
    if finding.code == "PAL010":
        return facts.get("copy") is copy.call and facts.get("semaphore") is node
    if finding.code == "PAL005":
        use = facts.get("use")
        return use is not None and use.kind == "dma_src" and use.node in (copy.call, *copy.starts)
    if finding.code == "PAL015":  # the REGULAR semaphore the copy's .wait() waits on, passed as src_sem
        base = _base_name(node)
        binding = model.lookup(base.id, model.scope_of(base), base.lineno) if base is not None else None
        return binding is not None and binding.node is facts.get("semaphore")
    return False


def _base_name(node: ast.expr) -> ast.Name | None:
    """`sems` of `sems`, `sems.at[1]`."""
    while isinstance(node, ast.Subscript) or isinstance(node, ast.Attribute) and node.attr == "at":
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _body_semaphore(model, kernel, node: ast.expr):
    """The kernel's semaphore (a body or pl.run_scoped parameter) `node` names, where it is a parameter used only
    through this expression's base name."""
    base = _base_name(node)
    if base is None:
        return None
    binding = model.lookup(base.id, model.scope_of(base), base.lineno)
    if binding is None or binding.kind != "param":
        return None
    return next((sem for sem in kernel.semaphores if sem.node is binding.node), None)


def _without_src_sem(updated: cst.Call) -> cst.Call:
    return without_keyword(updated, "src_sem", "the copy's src_sem keyword")
