"""Fix (PAL010, PAL014): a semaphore read out of its ref (`sems[1]`, `sems[...]`) where a TPU copy or
`pl.semaphore_signal` / `pl.semaphore_wait` takes one becomes the ref's `.at[]` view (`sems.at[1]`) or the
ref itself (`pl.select_ref(i, sems[0], sems.at[1])` for a copy: the read among the refs it chooses from; a TPU
`pl.semaphore_read(sems[0])`).

A copy, a signal and a wait take a semaphore ref; the value `sems[1]` reads is nothing they can use, so
the only meaning the code can have is the semaphore it names: `sems.at[1]`. Where the read is held in a name
first (`done = sems[1]`), the name's binding changes, if the copy is its only use. A number (`0`) has
no ref it names: no fix. For PAL014, the signals and waits after it in the same function that are given the
same read (`signal(sem[...])` then `wait(sem[...])`) change with it: JAX stops at the first, and the second
would fail next for the same reason (PAL014 reports only the first).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.gpu_interpreter import GPU_INTERPRETER_REFUSAL, gpu_interpreted
from .kernel_edits import CannotFix, FixBuilder


def _held_only_here(model, node: ast.Name, read: ast.expr) -> bool:
    """`node` names `read` (`done = sems[1]`), bound once and read only at `node`."""
    binding = model.lookup(node.id, model.scope_of(node), node.lineno)
    if binding is None or binding.kind != "assign" or getattr(binding, "value", None) is not read:
        return False
    scope = model.enclosing_function(node) or model.tree
    names = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == node.id]
    return len(names) == 2 and all(n is node or not isinstance(n.ctx, ast.Load) for n in names)


def fix(project, model, finding):
    facts = finding.facts
    node, not_ref = facts.get("semaphore"), facts.get("not_ref")
    if node is None or not_ref is None or facts.get("model") is not model:
        return None
    what, read = not_ref
    if what == "selected":
        return None  # a pl.select_ref selection: which semaphore is meant is chosen at run time
    if what != "loaded" or not isinstance(read, ast.Subscript):
        raise CannotFix("the semaphore is a number, which names no semaphore ref")
    if facts.get("not_ref_model", model) is not model:
        raise CannotFix("the value is read out of the semaphore in another module")
    kernel = facts.get("kernel")
    if kernel is not None and gpu_interpreted(project, kernel.entry):
        raise CannotFix(GPU_INTERPRETER_REFUSAL)
    from ..rules.pal010_dma_semaphore_not_ref import selected_value

    holder = node  # `pl.select_ref(i, sems[0], ...)`, or the name it is bound to: the read among its refs
    if isinstance(node, ast.Name):
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        holder = getattr(binding, "value", None) if binding is not None and binding.kind == "assign" else node
    chosen = isinstance(holder, ast.Call) and model.parents.get(read) is holder and selected_value(model, read)
    if read is not node and not chosen and not (isinstance(node, ast.Name) and _held_only_here(model, node, read)):
        raise CannotFix("the value read out of the ref is used elsewhere too")
    whole = isinstance(read.slice, ast.Constant) and read.slice.value is Ellipsis
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    target = file.find_ast(model, read, cst.Subscript)
    if target is None:
        raise CannotFix("the read was not found")

    def view(updated: cst.Subscript) -> cst.BaseExpression:
        if whole:
            return updated.value.with_changes(lpar=updated.lpar, rpar=updated.rpar) if not updated.value.lpar \
                else updated.value
        return updated.with_changes(value=cst.Attribute(value=updated.value, attr=cst.Name("at")))

    file.rewrite(target, view)
    for other in _same_reads(model, facts.get("kernel"), facts.get("op"), read) if finding.code == "PAL014" else ():
        found = file.find_ast(model, other, cst.Subscript)
        if found is None:
            raise CannotFix("the read was not found")
        file.rewrite(found, view)
    base = ast.get_source_segment(model.text, read.value)
    code = base if whole else f"{base}.at[{ast.get_source_segment(model.text, read.slice)}]"
    return builder.fix(f"pallas-lsp ({finding.code}): Pass the semaphore {'ref' if whole else 'view'} {code}",
                       "safe", preferred=True)


def _same_reads(model, kernel, call, read: ast.Subscript) -> list[ast.Subscript]:
    """The other signals' and waits' arguments in `read`'s function that read what it reads, from the same ref
    (`sem[...]` again, not held in a name)."""
    if kernel is None:
        return []
    scope = model.enclosing_function(read)
    text = ast.get_source_segment(model.text, read)
    binding = model.lookup(read.value.id, model.scope_of(read), read.lineno) if isinstance(read.value, ast.Name) else None
    if binding is None:
        return []
    out = []
    for op in kernel.semaphore_ops:
        if op.call is call or op.not_ref is None or op.model is not model or op.not_ref_model is not model:
            continue
        what, other = op.not_ref
        if (what != "loaded" or not isinstance(other, ast.Subscript) or not op.call.args or op.call.args[0] is not other
                or model.enclosing_function(other) is not scope or ast.get_source_segment(model.text, other) != text):
            continue
        if model.lookup(other.value.id, model.scope_of(other), other.lineno) is binding:
            out.append(other)
    return out

