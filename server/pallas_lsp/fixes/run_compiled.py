"""Fix (PAL002): run the kernel compiled, removing what makes it interpreted.

get_global has no interpret-mode implementation, whichever interpreter runs it; compiled, a global
semaphore is what the kernel asked for. So the switch goes, in every form the analysis knows: the
launch's `interpret=` keyword (in a call, a decorator, a `functools.partial`, or at the call of a
wrapper that passes its `**kwargs` on), a `with plgpu.force_gpu_interpret_mode():` /
`pltpu.force_tpu_interpret_mode()` around the launch (its body moves out of it), and a
`plgpu.set_gpu_interpret_mode()` / `pltpu.set_tpu_interpret_mode()` call. Always unsafe: the kernel
then runs on a GPU only, and a context manager or global switch also compiles the other kernels it
made interpreted. Offered only where the compiled kernel has no finding of its own (verification), and
where nothing in the workspace runs it on a CPU (see `cpu_runs`: a switch some runs set, a test, a program
that picks the CPU), since compiled it does not run there.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import MOSAIC_GPU_SCRATCH_REFUSAL
from ..analysis.kernels import FORCE_INTERPRET, SET_INTERPRET, KernelIndex, reachable_functions
from ..analysis.values import Api, Seq
from .cpu_runs import cpu_run
from .kernel_edits import CannotFix, FixBuilder, remove_statement, without_comment

TITLE = "Run the kernel compiled"


def fix(project, model, call: ast.Call, value, code: str):
    if code != "PAL002":
        return None
    sites = _interpret_sites(project, model, call)
    if not sites:
        return None
    on_a_cpu = cpu_run(project, sites, [model])
    if on_a_cpu is not None:
        raise CannotFix(on_a_cpu)
    builder = FixBuilder(project)
    removed, switches = [], False
    for site in sites:
        removed.append(_remove(builder, project, site))
        switches = switches or not _is_keyword_site(site)
    unsafe = "it runs on a GPU only, not in interpret mode on the CPU"
    if switches:
        unsafe += "; the other kernels this switch made interpreted run compiled too"
    return builder.fix(f"pallas-lsp ({code}): {TITLE} (remove {', '.join(dict.fromkeys(removed))}) "
                       f"(unsafe: {unsafe})", "unsafe")


def debugging_switch(project, model, call: ast.Call) -> bool:
    """Is the kernel interpreted by a `force_*_interpret_mode()` context or a `set_*_interpret_mode()` call: a
    switch whose only use is to run kernels on the CPU (a debugging entry point)? Then a fix that keeps it running
    there is offered before this one."""
    try:
        return any(not _is_keyword_site(site) for site in _interpret_sites(project, model, call))
    except CannotFix:
        return False


def _interpret_sites(project, model, call: ast.Call) -> list:
    """What makes each launch running the get_global interpreted, certainly or maybe (as PAL002 finds them)."""
    from ..rules.pal002_get_global_interpret import _importers

    function = model.enclosing_function(call)
    # Every index first: a module's `with force_*_interpret_mode()` marks kernels of other modules.
    indexes = [KernelIndex.of(project, source) for source in [model, *_importers(project, model)]]
    sites = []
    for entry in (e for index in indexes for e in index.entries if e.body is not None):
        if not (entry.interpret or entry.maybe_interpret):
            continue
        if any(f.node is function for f in reachable_functions(project, entry.body)):
            if entry.api == "pl.pallas_call":  # PAL003's finding, which the get_global's own may hide
                raise CannotFix("compiled, a pl.pallas_call has no get_global (Triton: 'Unimplemented primitive "
                                "in Pallas Triton lowering: get_global')")
            scratch = entry.kernel.kwarg("scratch_types")
            if entry.api == "pl.kernel" and scratch and not (isinstance(scratch[0], Seq) and not scratch[0].items):
                # No rule says so (interpreted, it is fine): Mosaic GPU, jax 0.12.
                raise CannotFix(f"a compiled pl.kernel takes no scratch (Mosaic GPU: '{MOSAIC_GPU_SCRATCH_REFUSAL}')")
            sites.extend(site for site in [*entry.interpret, *entry.maybe_interpret] if site not in sites)
    return sites


def _is_keyword_site(site) -> bool:
    return isinstance(site.node, ast.keyword) or isinstance(site.model.parents.get(site.node), ast.keyword)


def _api(project, model, node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        value = project.evaluator.value(model, node.func)
        if isinstance(value, Api):
            return value.name
    return None


def _remove(builder: FixBuilder, project, site) -> str:
    """Remove one interpret switch; what the title calls it."""
    model, node = site.model, site.node
    keyword = node if isinstance(node, ast.keyword) else model.parents.get(node)
    if isinstance(keyword, ast.keyword):
        if keyword.arg != "interpret":
            raise CannotFix("interpret= comes in a mapping of keywords (**)")
        owner = model.parents.get(keyword)
        if not isinstance(owner, ast.Call):
            raise CannotFix("the interpret= keyword was not found")
        _drop_keyword(builder, model, owner, keyword)
        return f"interpret={model.segment(keyword.value, 40)}"
    api = _api(project, model, node)
    parent = model.parents.get(node)
    if api in FORCE_INTERPRET and isinstance(parent, ast.withitem):
        unwrap_with(builder, model, model.parents.get(parent), parent)
        return f"with {model.segment(node, 50)}"
    if api in SET_INTERPRET and isinstance(parent, ast.Expr):
        remove_statement(builder, model, parent)
        return model.segment(node, 50)
    raise CannotFix("what makes the kernel interpreted is not an interpret= keyword, a force_*_interpret_mode "
                    "context or a set_*_interpret_mode statement")


def _drop_keyword(builder: FixBuilder, model, call: ast.Call, keyword: ast.keyword) -> None:
    file, _ = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    position = call.keywords.index(keyword) + len(call.args)
    if target is None or len(target.args) != len(call.args) + len(call.keywords):
        raise CannotFix("the call passing interpret= was not found")

    def drop(updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        removed = args.pop(position)
        if position == 0:
            if _comment(removed.comma) is not None:
                raise CannotFix("the comment of interpret= would be lost")
            return updated.with_changes(args=args)
        before = args[position - 1]
        comma = before.comma
        if position == len(args):  # it was the last: the one before takes its comma (or none)
            comma = without_comment(removed.comma) if isinstance(removed.comma, cst.Comma) else removed.comma
            if _comment(before.comma) is not None:
                comma = _with_comment(comma, before.comma)
        lost = _comment(removed.comma)
        if lost is not None:  # `interpret=True,  # on the CPU`: the comment stays, on a line of its own
            comma = _with_line(comma, lost, before.comma)
        args[position - 1] = before.with_changes(comma=comma)
        return updated.with_changes(args=args)

    file.rewrite(target, drop)


def _comment(comma) -> cst.Comment | None:
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return comma.whitespace_after.first_line.comment
    return None


def _with_comment(comma, like: cst.Comma):
    """`comma` ending its line with `like`'s comment."""
    if not (isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)):
        raise CannotFix("a comment of the call would be lost")
    after = comma.whitespace_after
    return comma.with_changes(whitespace_after=after.with_changes(first_line=like.whitespace_after.first_line))


def _with_line(comma, comment: cst.Comment, indented_like):
    """`comma` followed by a line holding only `comment`, indented as the argument after `indented_like` was."""
    if not (isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)
            and isinstance(indented_like, cst.Comma)
            and isinstance(indented_like.whitespace_after, cst.ParenthesizedWhitespace)):
        raise CannotFix("the comment of interpret= would be lost")
    after, like = comma.whitespace_after, indented_like.whitespace_after
    line = cst.EmptyLine(indent=like.indent, whitespace=like.last_line, comment=comment)
    return comma.with_changes(whitespace_after=after.with_changes(empty_lines=[*after.empty_lines, line]))


def unwrap_with(builder: FixBuilder, model, statement: ast.With, item: ast.withitem) -> None:
    """`with force_*_interpret_mode(): BODY` becomes BODY (the statement's comments kept); one item of
    several just goes."""
    if not isinstance(statement, ast.With):
        raise CannotFix("the interpret-mode context was not found")
    file, _ = builder.file(model)
    target = file.find_ast(model, statement, cst.With)
    if target is None or len(target.items) != len(statement.items):
        raise CannotFix("the with statement was not found")
    position = statement.items.index(item)
    if len(statement.items) > 1:
        def drop_item(updated: cst.With) -> cst.With:
            items = list(updated.items)
            items.pop(position)
            items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=items)

        file.rewrite(target, drop_item)
        return
    if not isinstance(target.body, cst.IndentedBlock):
        raise CannotFix("the with statement's body is on its line")
    if any(line.comment is not None for line in target.body.footer):
        raise CannotFix("the comments that end the with statement's body would be lost")

    def unwrap(updated: cst.With):
        body = list(updated.body.body)
        leading = list(updated.leading_lines)
        comment = updated.body.header.comment
        if comment is not None:  # the with line's own comment stays, on a line of its own
            leading.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=comment))
        body[0] = body[0].with_changes(leading_lines=[*leading, *body[0].leading_lines])
        return cst.FlattenSentinel(body)

    file.rewrite(target, unwrap)
