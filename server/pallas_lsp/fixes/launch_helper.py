"""A launch helper shared by several bodies: `def _call(body, n_in, x): return pl.pallas_call(body, ...)`, called
as `_call(_fwd_body, 1, x)` and `_call(_bwd_body, 2, x)` (a `custom_vjp` pair, a family of kernels).

The launch is written once, but each call of the helper launches the body it passes. Scratch one body needs is
given by the calls passing that body, through a keyword parameter of the helper the launch hands on
(`def _call(body, n_in, x, scratch_shapes=()): ... pl.pallas_call(body, ..., scratch_shapes=scratch_shapes)`,
`_call(_bwd_body, 2, x, scratch_shapes=[...])`): the other bodies' launches stay as they were, as a kernel author
adds an option to their own helper.
"""

from __future__ import annotations

import ast

import libcst as cst

from .cst_locate import CannotFix, expression
from .sites import HelperLaunch


def scratch_through_helper(builder, entry, through: HelperLaunch, keyword: str, code: str) -> None:
    """Give the launch `keyword=` from a new keyword parameter of the helper (default `()`; or the parameter it
    already hands on), and each call passing the body `code` there, written as the call site reads it."""
    from .kernel_edits import edit_sequence_argument, unique_name

    model, helper = through.model, through.helper
    found = entry.kernel.kwarg(keyword)
    if found is not None:
        written = found[1]
        binding = model.lookup(written.id, model.scope_of(written), written.lineno) \
            if isinstance(written, ast.Name) else None
        if binding is None or binding.kind != "param" or not _defaulted(helper, written.id):
            raise CannotFix(f"the shared launch in {helper.name} gives every body its own {keyword}, which the new "
                            "buffer would reach")
        name = written.id
    else:
        if helper.args.kwarg is not None:
            raise CannotFix(f"{helper.name} takes **kwargs: where a new keyword would go is not known")
        name = unique_name(model, helper, keyword)
        _add_keyword_parameter(builder, model, helper, name)
        file, _ = builder.file(model)
        launch = file.find_ast(model, entry.node, cst.Call)
        if launch is None:
            raise CannotFix("the launch was not found")
        from .kernel_edits import call_with_keyword

        file.rewrite(launch, lambda updated: call_with_keyword(updated, keyword, name))
    for call_model, call in through.calls:
        at_call = _at_call(builder.project, model, helper, call_model, call, code)
        if at_call is None:
            raise CannotFix(f"the buffer's type reads names of {helper.name} that its callers do not pass")
        given = next((k.value for k in call.keywords if k.arg == name), None)
        edit_sequence_argument(builder, call_model, call, name, given, at_call, first=False, add_if_missing=True)


def _defaulted(helper: ast.FunctionDef, name: str) -> bool:
    """Does the helper's parameter `name` have a default (so calls not passing it stay valid)?"""
    args = helper.args
    positional = args.posonlyargs + args.args
    with_default = positional[len(positional) - len(args.defaults):] if args.defaults else []
    kwonly = [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return any(a.arg == name for a in [*with_default, *kwonly])


def _add_keyword_parameter(builder, model, helper: ast.FunctionDef, name: str) -> None:
    """`name=()` last among the helper's parameters (keyword-only where it has `*args` or keyword-only ones)."""
    file, _ = builder.file(model)
    node = file.function(helper)
    if node is None:
        raise CannotFix(f"{helper.name} was not found")
    from .kernel_edits import appended

    def change(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = updated.params
        new = cst.Param(cst.Name(name), default=expression("()"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace("")))
        if params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel):
            return updated.with_changes(params=params.with_changes(
                kwonly_params=appended(list(params.kwonly_params), new)))
        return updated.with_changes(params=params.with_changes(params=appended(list(params.params), new)))

    file.rewrite(node, change)


def _at_call(project, model, helper: ast.FunctionDef, call_model, call: ast.Call, code: str) -> str | None:
    """`code`, written in the helper, as the call site reads it: each of the helper's parameters replaced by what
    the call passes it (parenthesised where it is more than a name, an attribute, a call or a subscript), module-level
    names kept where the call is in the same module. None where a name has no counterpart at the call."""
    tree = ast.parse(code, mode="eval")
    args = helper.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    passed = dict(zip(positional, call.args))
    if any(isinstance(a, ast.Starred) for a in call.args[:len(positional)]):
        return None
    passed.update((k.arg, k.value) for k in call.keywords if k.arg)
    replacements = []
    for name in [n for n in ast.walk(tree) if isinstance(n, ast.Name)]:
        binding = model.lookup(name.id, helper, helper.body[0].lineno)
        if binding is not None and binding.kind == "param":
            given = passed.get(name.id)
            text = ast.get_source_segment(call_model.text, given) if given is not None else None
            if text is None or "\n" in text:
                return None
            if not isinstance(given, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)):
                text = f"({text})"
            replacements.append((name, text))
            continue
        if binding is not None and binding is not model.module_binding(name.id):
            return None  # a local of the helper
        if call_model is not model:
            return None
        here = call_model.lookup(name.id, call_model.scope_of(call), call.lineno)
        if here is not binding:
            return None  # the caller's own name hides it
    lines = code.split("\n")
    for node, text in sorted(replacements, key=lambda r: (r[0].lineno, r[0].col_offset), reverse=True):
        row = lines[node.lineno - 1]
        lines[node.lineno - 1] = row[:node.col_offset] + text + row[node.end_col_offset:]
    return "\n".join(lines)


def pass_through_named_lambdas(builder, entries, name: str) -> None:
    """Each launch whose body is `lambda x_ref, o_ref: F(x_ref, o_ref, ...)` (`sites.named_refs_call`), F having a
    new last ref `name`: the lambda takes it too and hands it on after the others."""
    from .kernel_edits import appended
    from .sites import named_refs_call

    for entry in entries:
        lambda_node = entry.body.node if entry.body is not None else None
        call = named_refs_call(lambda_node)
        if call is None:
            continue
        file, _ = builder.file(entry.model)
        target = file.find_ast(entry.model, lambda_node, cst.Lambda)
        if target is None or name in [a.arg for a in lambda_node.args.args]:
            raise CannotFix("the launched lambda was not found")
        count = len(call.args)

        def change(updated: cst.Lambda) -> cst.Lambda:
            params = appended(list(updated.params.params), cst.Param(cst.Name(name)))
            inner = updated.body
            arguments = list(inner.args)
            new = cst.Arg(cst.Name(name), comma=arguments[count - 1].comma)
            arguments[count - 1] = arguments[count - 1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            arguments.insert(count, new)
            return updated.with_changes(params=updated.params.with_changes(params=params),
                                        body=inner.with_changes(args=arguments))

        file.rewrite(target, change)
