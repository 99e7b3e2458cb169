"""LibCST rewrites shared by the fixes: kernel parameters, launch arguments, spec lists.

A `FixBuilder` collects rewrites for every file a fix touches (a body and its launch may live in
different modules) and turns them into text edits; a fix whose result does not parse is dropped.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis import big_literals
from ..analysis.findings import Fix
from .cst_locate import CannotFix, CstFile, expression
from .imports import Imports

__all__ = ["CannotFix", "FixBuilder"]


class FixBuilder:
    def __init__(self, project):
        self.project = project
        self.files: dict[str, tuple[CstFile, Imports]] = {}
        self.models: dict[str, object] = {}

    def file(self, model) -> tuple[CstFile, Imports]:
        if model.path not in self.files:
            if model.source.syntax_errors:
                raise CannotFix("the file does not parse")
            self.files[model.path] = (CstFile(model), Imports(model))
            self.models[model.path] = model
        return self.files[model.path]

    def fix(self, title: str, applicability: str = "safe", preferred: bool = False) -> Fix | None:
        for path in list(self.files):
            self._drop_imports_made_unused(self.models[path])
        edits = []
        for path, (file, imports) in self.files.items():
            edits.extend(imports.edits(path, file.lines))
            edits.extend(file.edits())
        if not edits:
            return None
        return Fix(title, tuple(edits), applicability, preferred)


    def _drop_imports_made_unused(self, model) -> None:
        """Remove a one-name import statement the fix left unused (the get_global it moved was the
        last use of `pl` in a helper module): what ruff's F401 would flag, a person would delete."""
        from .edits import apply_edits

        file, imports = self.files[model.path]
        try:
            after = big_literals.parse(apply_edits(model.text, file.edits()))
        except (SyntaxError, ValueError):
            return
        before_uses, after_uses = _loaded_names(model.tree), _loaded_names(after)
        exported = _exported_names(model.tree)
        if any("import *" in other.text for other in self.project.importers(model)):
            return  # star-imported: its imports are names of the modules that import it so
        for statement in model.tree.body:
            if not isinstance(statement, (ast.Import, ast.ImportFrom)) or len(statement.names) != 1:
                continue
            alias = statement.names[0]
            local = alias.asname or alias.name.split(".")[0]
            line = model.source.lines[statement.lineno - 1] if statement.lineno - 1 < len(model.source.lines) else ""
            # An import added just before it (sorted there) does not touch it: it can still go.
            touched = imports.touched_lines() - (imports.inserted_before() & {statement.lineno - 1})
            if (alias.name == "*" or local in exported or "noqa" in line or local not in before_uses
                    or local in after_uses or {statement.lineno - 1, statement.end_lineno - 1} & touched):
                continue
            remove_statement(self, model, statement)


def _loaded_names(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _exported_names(tree: ast.Module) -> set[str]:
    """Names in a module's `__all__` (an import there is a re-export, used or not)."""
    for statement in tree.body:
        if (isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)
                and isinstance(statement.value, (ast.List, ast.Tuple))):
            return {e.value for e in statement.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


# ---- kernel body parameters ----------------------------------------------------------------------

def without_comment(comma: cst.Comma) -> cst.Comma:
    """A copy of a comma's layout (same line breaks and indent) without the comment that follows it."""
    after = comma.whitespace_after
    if isinstance(after, cst.ParenthesizedWhitespace):
        return comma.with_changes(whitespace_after=after.with_changes(first_line=cst.TrailingWhitespace(),
                                                                     empty_lines=[]))
    if isinstance(after, cst.SimpleWhitespace) and not after.value:
        return comma.with_changes(whitespace_after=cst.SimpleWhitespace(" "))  # a trailing `,)` copied inside
    return comma


def appended(items: list, new) -> list:
    """`items + [new]` with `new` laid out like its neighbours; a trailing comma and the comment
    after the old last item stay where they were."""
    if not items:
        return [new]
    last = items[-1]
    between = items[0].comma if len(items) > 1 and isinstance(items[0].comma, cst.Comma) else None
    if between is None and isinstance(last.comma, cst.Comma) and isinstance(last.comma.whitespace_after, cst.SimpleWhitespace) \
            and not last.comma.whitespace_after.value and not last.comma.whitespace_before.value:
        # `(x_smem,)`, a one-element tuple's comma: `(x_smem, bar)`
        return [last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), new]
    if isinstance(last.comma, cst.Comma):
        new = new.with_changes(comma=without_comment(last.comma))
        last_ws = last.comma.whitespace_after
        if between is None:
            last_comma = last.comma
        elif isinstance(last_ws, cst.ParenthesizedWhitespace) and isinstance(between.whitespace_after,
                                                                             cst.ParenthesizedWhitespace):
            last_comma = last.comma.with_changes(whitespace_after=between.whitespace_after.with_changes(
                first_line=last_ws.first_line, empty_lines=last_ws.empty_lines))
        else:
            last_comma = without_comment(between)
    else:
        last_comma = without_comment(between) if between is not None else cst.Comma(
            whitespace_after=cst.SimpleWhitespace(" "))
        if isinstance(last, cst.Arg) and not isinstance(last.whitespace_after_arg, cst.SimpleWhitespace):
            # `f(\n  a, b\n)`: the line break before the closing bracket follows the new last argument
            new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
            last = last.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
    return [*items[:-1], last.with_changes(comma=last_comma), new]


def _comma_like(param: cst.Param | None) -> cst.Comma:
    if param is not None and isinstance(param.comma, cst.Comma):
        return without_comment(param.comma)
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def check_parameters(function: ast.FunctionDef, keyword: bool = False) -> None:
    args = function.args
    if args.posonlyargs or args.vararg is not None or (args.kwarg is not None and not keyword):
        raise CannotFix(f"{function.name} takes *args, **kwargs or positional-only parameters")


def tail_unpacking(function: ast.FunctionDef) -> ast.Tuple | None:
    """The names a body taking its refs as `*refs` unpacks the last of them into, in one statement of its own
    block: `x_smem, bar = refs[n:]`, or `outs, (x_smem, bar) = refs[:n], refs[n:]` (jax-linear-attention's
    kernels); None where there is no such one, or where the body reads its refs from the end (`refs[-1]`), which
    one more ref would shift. A new last ref is one more name there."""
    vararg = function.args.vararg
    if vararg is None or function.args.posonlyargs or function.args.kwarg is not None:
        return None
    name = vararg.arg

    def is_tail(node: ast.AST) -> bool:
        return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name
                and isinstance(node.slice, ast.Slice) and node.slice.lower is not None
                and node.slice.upper is None and node.slice.step is None)

    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name and any(
                isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) for n in ast.walk(node.slice)):
            return None  # `refs[-1]`, `refs[:-1]`: counted from the end
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in node.args) \
                and isinstance(node.func, ast.Name) and node.func.id == "len":
            return None
    found = []
    for statement in function.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Tuple) and is_tail(value):
            found.append(target)
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            found += [t for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Tuple) and is_tail(v)]
    tails = [t for t in found if all(isinstance(e, ast.Name) for e in t.elts)]
    return tails[0] if len(tails) == 1 and len(found) == 1 else None


def vararg_split_point(function: ast.FunctionDef, use) -> bool:
    """Can a new last ref be split off the body's `*refs` where the get_global was (`sems = pl.get_global(...)`
    becoming `*refs, sems = scratch`)? Where the statement is the body's own, binds a name, and `refs` is read only
    after it (never reassigned): a body taking its scratch as `*halves` of a comprehension's buffers."""
    vararg = function.args.vararg
    if vararg is None or function.args.posonlyargs or use.statement is None or use.name is None \
            or use.lambda_statement is not None or use.statement not in function.body:
        return False
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == vararg.arg and (
                not isinstance(node.ctx, ast.Load) or node.lineno <= use.statement.end_lineno):
            return False
    return True


def front_indexed_vararg(function: ast.FunctionDef, use) -> bool:
    """Does the body read its `*refs` only from the front (`refs[n]`, `refs[:n]`, `refs[a:b]`), so a new last ref
    is `refs[-1]` and no read shifts? Where the get_global is `name = pl.get_global(...)` in the body itself, and
    `refs` is never rebound, passed on whole, counted (`len(refs)`), or read from the end or with an open tail."""
    vararg = function.args.vararg
    if vararg is None or function.args.posonlyargs or use.statement is None or use.name is None \
            or use.lambda_statement is not None or use.statement not in function.body:
        return False
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == vararg.arg):
            continue
        read = parents.get(node)
        if not isinstance(node.ctx, ast.Load) or not (isinstance(read, ast.Subscript) and read.value is node):
            return False
        index = read.slice
        if isinstance(index, ast.Slice) and (index.upper is None or index.step is not None):
            return False
        if any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) for n in ast.walk(index)) \
                or any(isinstance(n, ast.Constant) and not isinstance(n.value, int) for n in ast.walk(index)):
            return False
    return True


def split_vararg(builder: FixBuilder, model, function: ast.FunctionDef, use) -> None:
    """`def body(x, *refs)` becomes `def body(x, *scratch)`, and the get_global's statement
    `*refs, name = scratch` (see `vararg_split_point`)."""
    file, _ = builder.file(model)
    node = file.function(function)
    small = file.find_ast(model, use.statement, cst.BaseSmallStatement)
    if node is None or small is None:
        raise CannotFix("the kernel body was not found")
    rest, joined = function.args.vararg.arg, unique_name(model, function, "scratch")

    def rename(updated: cst.FunctionDef) -> cst.FunctionDef:
        star = updated.params.star_arg
        return updated.with_changes(params=updated.params.with_changes(
            star_arg=star.with_changes(name=cst.Name(joined))))

    file.rewrite(node, rename)
    file.rewrite(small, lambda updated: cst.parse_statement(f"*{rest}, {use.name} = {joined}\n").body[0])


def append_to_unpacking(builder: FixBuilder, model, target: ast.Tuple, name: str) -> None:
    """`x_smem, marks_smem = ...` becomes `x_smem, marks_smem, name = ...` (see `tail_unpacking`)."""
    file, _ = builder.file(model)
    node = file.find_ast(model, target, cst.Tuple)
    if node is None:
        raise CannotFix("the unpacking of the body's refs was not found")
    file.rewrite(node, lambda updated: updated.with_changes(
        elements=appended(list(updated.elements), cst.Element(cst.Name(name)))))


def add_parameter(builder: FixBuilder, model, function: ast.FunctionDef, name: str, index: int | None,
                  keyword: bool = False) -> None:
    """Add `name` at positional `index` (None: last positional), or as a keyword-only parameter."""
    file, _ = builder.file(model)
    node = file.function(function)
    if node is None:
        raise CannotFix("the kernel body was not found")

    def change(updated: cst.FunctionDef) -> cst.FunctionDef:
        params = updated.params
        if keyword:
            kwonly = list(params.kwonly_params)
            kwonly = appended(kwonly, cst.Param(cst.Name(name)))
            star = params.star_arg if not isinstance(params.star_arg, cst.MaybeSentinel) else cst.ParamStar()
            return updated.with_changes(params=params.with_changes(kwonly_params=kwonly, star_arg=star))
        positional = list(params.params)
        new = cst.Param(cst.Name(name))
        # Before the first parameter with a default: JAX passes refs by position, and Python allows
        # no parameter without a default after one with it.
        defaulted = next((n for n, param in enumerate(positional) if param.default is not None), len(positional))
        at = defaulted if index is None else min(index, defaulted)
        if at < len(positional):
            positional.insert(at, new.with_changes(comma=_comma_like(positional[at])))
        else:
            positional = appended(positional, new)
        return updated.with_changes(params=params.with_changes(params=positional))

    file.rewrite(node, change)


def parameter_name(builder: FixBuilder, model, use, fallback: str) -> str:
    """The new parameter's name: the variable's own, or `<name>_ref` where every other parameter
    is a `_ref` (the uses are renamed to match); a fresh `<fallback>` for an unnamed get_global."""
    function = use.function
    if use.name is None:
        return unique_name(model, function, fallback)
    params = [a.arg for a in [*function.args.args, *function.args.kwonlyargs]]
    if function.args.vararg is not None:  # the new ref is one of `*refs`, unpacked under the names it has
        return use.name
    if not params or use.name.endswith("_ref") or not all(p.endswith("_ref") for p in params):
        return use.name
    wanted = f"{use.name}_ref"
    if unique_name(model, function, wanted) != wanted:
        return use.name
    file, _ = builder.file(model)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == use.name and isinstance(node.ctx, ast.Load):
            binding = model.lookup(node.id, model.scope_of(node), node.lineno)
            if binding is None or binding.node is not use.statement:
                continue
            target = file.find_ast(model, node, cst.Name)
            if target is None:
                raise CannotFix(f"a use of {use.name} was not found")
            file.rewrite(target, lambda updated: updated.with_changes(value=wanted))
    return wanted


def unique_name(model, function: ast.AST, wanted: str) -> str:
    taken = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            taken.add(node.id)
        elif isinstance(node, ast.arg):
            taken.add(node.arg)
    name, counter = wanted, 2
    while name in taken or model.module_binding(name) is not None:
        name, counter = f"{wanted}{counter}", counter + 1
    return name


# ---- statements and expressions ------------------------------------------------------------------

def remove_statement(builder: FixBuilder, model, statement: ast.stmt, keep_comment: bool = True) -> None:
    """Remove one simple statement, keeping the comments above it and the block valid; its own line's
    comment too unless `keep_comment` is False (a statement moved elsewhere with its comment)."""
    file, _ = builder.file(model)
    small = file.find_ast(model, statement, cst.BaseSmallStatement)
    line = file.parent(small) if small is not None else None
    if not isinstance(line, cst.SimpleStatementLine):
        raise CannotFix("the get_global statement was not found")
    if len(line.body) > 1:
        position = line.body.index(small)

        def drop_small(updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
            body = [s for i, s in enumerate(updated.body) if i != position]
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(body=body)

        file.rewrite(line, drop_small)
        return
    block = file.parent(line)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        raise CannotFix("the get_global statement is not in a block")
    position = list(block.body).index(line)

    def drop_line(updated):
        body = list(updated.body)
        removed = body.pop(position)
        following = body[position] if position < len(body) else None
        # a statement moved elsewhere (`keep_comment` False) leaves its comments where they were
        kept = _comments_kept(removed.leading_lines, following) if keep_comment else list(removed.leading_lines)
        comment = removed.trailing_whitespace.comment if keep_comment else None
        if comment is not None:  # the line's own comment stays, on a line of its own
            kept.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=comment))
        if following is not None:
            body[position] = following.with_changes(leading_lines=[*kept, *following.leading_lines])
        elif not body and not isinstance(updated, cst.Module):  # a top-level statement may just go
            body.append(cst.SimpleStatementLine([cst.Pass()], leading_lines=removed.leading_lines,
                                                trailing_whitespace=removed.trailing_whitespace))
        elif body:  # the block's last statement: its comments end the block
            updated = updated.with_changes(footer=[*kept, *updated.footer])
        return updated.with_changes(body=body)

    file.rewrite(block, drop_line)


def _comments_kept(leading: list, following) -> list:
    """The lines above a removed statement that stay: all of them, except the comment lines right above it
    (no blank line between) where a blank line or the block's end follows it, so they spoke of that statement
    alone (`# One accumulator per row block` over `acc = pl.get_global(...)`), not of a group of lines."""
    lines = list(leading)
    attached = len(lines)
    while attached and lines[attached - 1].comment is not None:
        attached -= 1
    after = following.leading_lines if following is not None else ()
    alone = following is None or (after and after[0].comment is None)
    if attached == len(lines) or not alone:
        return lines
    kept = lines[:attached]
    if kept and kept[-1].comment is None and after:  # one blank line between what was above and what follows
        kept.pop()
    return kept


def statement_with_comment(builder: FixBuilder, model, statement: ast.stmt) -> str:
    """The statement's text with its line's comment, where the line holds that statement alone."""
    file, _ = builder.file(model)
    small = file.find_ast(model, statement, cst.BaseSmallStatement)
    line = file.parent(small) if small is not None else None
    text = ast.get_source_segment(model.text, statement)
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line.trailing_whitespace.comment:
        return f"{text}  {line.trailing_whitespace.comment.value}"
    return text


def remove_get_global(builder: FixBuilder, model, use, name: str) -> None:
    """The get_global's buffer is now `name` (a parameter): its `name = pl.get_global(...)` goes (and the
    lambda it was written in, the later statement first so the earlier one's place still holds), or the
    call becomes `name`."""
    if use.statement is None:
        replace_expression(builder, model, use.call, name)
        return
    remove_statement(builder, model, use.statement)
    if use.lambda_statement is not None:
        remove_statement(builder, model, use.lambda_statement)


def replace_expression(builder: FixBuilder, model, node: ast.expr, code: str) -> None:
    file, _ = builder.file(model)
    target = file.find_ast(model, node, cst.BaseExpression)
    if target is None:
        raise CannotFix("the expression was not found")
    file.rewrite(target, lambda updated: expression(code).with_changes(lpar=updated.lpar, rpar=updated.rpar)
                 if hasattr(updated, "lpar") else expression(code))


# ---- launches ------------------------------------------------------------------------------------

def _with_first_argument(call: cst.Call, value: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    if args:
        args.insert(0, cst.Arg(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    else:
        args = [cst.Arg(value)]
    return call.with_changes(args=args)


def _is_partial(builder: FixBuilder, model, call: ast.Call) -> bool:
    from ..analysis.values import Api

    func = builder.project.evaluator.value(model, call.func)
    return isinstance(func, Api) and func.name == "functools.partial"


def _with_argument_at(call: cst.Call, index: int, value: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if index < len(args):
        args.insert(index, cst.Arg(value, comma=comma))
    else:
        args = appended(args, cst.Arg(value))
    return call.with_changes(args=args)


def pass_argument(builder: FixBuilder, model, call: ast.Call, code: str, position: int | None = None) -> None:
    """Pass `code` as the positional argument at `position` of a call (default: the last, before its keywords)."""
    file, _ = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None:
        raise CannotFix("a call was not found")
    at = len(call.args) if position is None else position
    file.rewrite(target, lambda updated: _with_argument_at(updated, at, expression(code)))


def thread_through_helper(builder: FixBuilder, plan, name: str, passed: str | None = None) -> None:
    """The helper holding the get_global takes `name` as its last parameter without a default (before
    those with one); every call passes it (`passed`, the bodies' name for it, default `name`) there, so each
    must pass the parameters before it by position."""
    helper = plan.helper
    check_parameters(helper)
    required = len(helper.args.args) - len(helper.args.defaults)
    # A method called as self.name(...) / obj.name(...) gets its first parameter bound by the call.
    bound = int(isinstance(plan.use.model.parents.get(helper), ast.ClassDef) and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in helper.decorator_list))
    from .sites import constructed_class, forwards_refs, is_partial_of

    # `functools.partial(helper, a, b)` handed to a loop: the new parameter comes right after those it binds.
    partials = {len(call.args) - 1 for _, call in plan.calls if is_partial_of(call, helper)}
    if len(partials) > 1 or (partials and bound):
        raise CannotFix(f"the partials of {helper.name} bind different numbers of arguments")
    index = partials.pop() if partials else None
    forwarding = {id(call) for model, call in plan.calls if forwards_refs(model, call)}
    if forwarding and (helper.args.defaults or index is not None or bound):
        raise CannotFix(f"{helper.name} is handed refs with *args, and where the new one lands is not known")
    for _, call in plan.calls:
        if is_partial_of(call, helper) or id(call) in forwarding:
            continue
        if bound and not isinstance(call.func, ast.Attribute) and constructed_class(plan.use.model, helper) is None:
            raise CannotFix(f"{helper.name} is called other than as a bound method")
        if len(call.args) + bound < (required if index is None else index):
            raise CannotFix(f"a call of {helper.name} passes a parameter without a default by keyword")
    add_parameter(builder, plan.use.model, helper, name, index)
    for model, call in plan.calls:
        if id(call) in forwarding:
            continue  # the new last ref is in the caller's *args already
        position = len(call.args) if is_partial_of(call, helper) else required - bound if index is None else index
        pass_argument(builder, model, call, passed or name, position)
    for model, closure, body in plan.moved:
        _move_into(builder, model, closure, body)


def _move_into(builder: FixBuilder, model, closure: ast.FunctionDef, body: ast.FunctionDef) -> None:
    """The closure's `def` leaves the factory's block for the start of the body's (see `sites._body_beside`), with
    the edits made inside both."""
    file, _ = builder.file(model)
    factory = file.function(model.enclosing_function(closure))
    if factory is None or not isinstance(factory.body, cst.IndentedBlock):
        raise CannotFix("the function making the kernel body was not found")

    def move(updated: cst.FunctionDef) -> cst.FunctionDef:
        statements = list(updated.body.body)
        named = {s.name.value: n for n, s in enumerate(statements) if isinstance(s, cst.FunctionDef)}
        if closure.name not in named or body.name not in named:
            raise CannotFix("the closure or the kernel body was not found")
        moving = statements[named[closure.name]]
        target = statements[named[body.name]]
        inner = list(target.body.body)
        first = 1 if inner and _is_docstring(inner[0]) else 0
        inner.insert(first, moving.with_changes(leading_lines=[]))
        if first < len(inner) - 1:
            inner[first + 1] = inner[first + 1].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        target = target.with_changes(body=target.body.with_changes(body=inner))
        if named[body.name] == named[closure.name] + 1:  # the body takes the place the closure had
            target = target.with_changes(leading_lines=moving.leading_lines)
        statements[named[body.name]] = target
        del statements[named[closure.name]]
        return updated.with_changes(body=updated.body.with_changes(body=statements))

    file.rewrite(factory, move)


def _is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
        statement.body[0], cst.Expr) and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def give_to_siblings(builder: FixBuilder, plan, name: str, index: int | None, keyword: bool = False) -> str:
    """The other bodies a launch may pick take the new parameter too (unused there), so the launch's
    new operand or scratch fits whichever body runs. Returns the title's note naming them."""
    for model, sibling in plan.siblings:
        if unique_name(model, sibling, name) != name:
            raise CannotFix(f"{name} is already used in {sibling.name}")
        check_parameters(sibling, keyword=keyword)
        add_parameter(builder, model, sibling, name, index, keyword=keyword)
    names = ", ".join(sibling.name for _, sibling in plan.siblings)
    return f" (also taken, unused, by {names})" if names else ""


def take_name(builder: FixBuilder, plan, fallback: str, body_side: bool = False) -> str:
    """The new parameter's name in the body (and the helper it is threaded to); with `body_side`, the helper's,
    which a body binding it already takes under another name (`bodies_name`)."""
    from .sites import bound_elsewhere

    use = plan.use
    stored = use.model.parents.get(use.call)
    if use.name is None and stored_as(use) is not None:
        fallback = stored_as(use)  # `self.sems = pl.get_global(...)`: the parameter is `sems`
    elif use.name is None and isinstance(stored, ast.Assign) and stored.value is use.call \
            and len(stored.targets) == 1 and isinstance(stored.targets[0], ast.Name) \
            and not stored.targets[0].id.endswith("_ref"):
        fallback = f"{stored.targets[0].id}_ref"  # `acc = ...` bound in another branch too: `acc = acc_ref`
    if plan.helper is None:
        return parameter_name(builder, use.model, use, fallback)
    name = use.name or unique_name(use.model, plan.helper, fallback)
    if use.name is not None and bound_elsewhere(plan.helper, use):
        raise CannotFix(f"{name} is bound more than once in {plan.helper.name}")
    for model, body, _ in plan.bodies if not body_side else ():
        if unique_name(model, body, name) != name:
            raise CannotFix(f"{name} is already used in {body.name}")
    return name


def bodies_name(plan, name: str) -> str:
    """The launched bodies' name for the helper's new parameter `name`: the same, unless a body uses it already
    (`staging = self.widen(x_ref)`, the helper's own `staging` buffer): then `<name>_ref`, free in every body."""
    if plan.helper is None or all(unique_name(model, body, name) == name for model, body, _ in plan.bodies):
        return name
    wanted = name if name.endswith("_ref") else f"{name}_ref"
    found = {unique_name(model, body, wanted) for model, body, _ in plan.bodies}
    if len(found) != 1:
        raise CannotFix(f"{name} is already used in {plan.bodies[0][1].name}")
    return found.pop()


def stored_as(use) -> str | None:
    """`sems` of `self.sems = pl.get_global(...)`: the attribute the buffer is kept in names the parameter."""
    parent = use.model.parents.get(use.call)
    if isinstance(parent, ast.Assign) and parent.value is use.call and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Attribute) and parent.targets[0].attr.isidentifier():
        return parent.targets[0].attr
    return None


def pass_first_operand(builder: FixBuilder, entry, operand: str) -> str:
    """Make every caller of the launched kernel pass `operand` first. Returns how ('inline'/'partial'/'calls')."""
    from .sites import decorated_function

    model = entry.model
    file, imports = builder.file(model)
    decorated = decorated_function(entry)
    if decorated is None:
        outer = model.parents.get(entry.node)
        if isinstance(outer, ast.Call) and outer.func is entry.node:
            target = file.find_ast(model, outer, cst.Call)
            if target is None:
                raise CannotFix("the kernel's call was not found")
            file.rewrite(target, lambda updated: _with_first_argument(updated, expression(operand)))
            return "inline"
        if isinstance(outer, ast.Call) and outer.args and outer.args[0] is entry.node and _is_partial(builder, model, outer):
            # Already `functools.partial(kernel, ...)` (an earlier fix): bind the new operand first.
            target = file.find_ast(model, outer, cst.Call)
            if target is None:
                raise CannotFix("the kernel's partial was not found")
            file.rewrite(target, lambda updated: _with_argument_at(updated, 1, expression(operand)))
            return "partial"
        target = file.find_ast(model, entry.node, cst.Call)
        if target is None:
            raise CannotFix("the kernel launch was not found")
        partial = imports.name("functools.partial")

        def wrap(updated: cst.Call) -> cst.Call:
            return cst.Call(func=expression(partial), args=[
                cst.Arg(updated.with_changes(lpar=[], rpar=[]),
                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(expression(operand))], lpar=updated.lpar, rpar=updated.rpar)

        file.rewrite(target, wrap)
        return "partial"
    # The decorated function is the kernel: its callers in this module pass the operand.
    calls, other_uses = [], 0
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Name) and node.id == decorated.name and isinstance(node.ctx, ast.Load):
            binding = model.lookup(node.id, model.scope_of(node), node.lineno)
            if binding is None or binding.node is not decorated:
                continue
            parent = model.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                calls.append(parent)
            else:
                other_uses += 1
    if other_uses or not calls or any(decorated.name in other.text for other in builder.project.importers(model)):
        return _wrap_decorated(builder, model, decorated, operand)
    for call in calls:
        target = file.find_ast(model, call, cst.Call)
        if target is None:
            raise CannotFix("a call of the kernel was not found")
        file.rewrite(target, lambda updated: _with_first_argument(updated, expression(operand)))
    return "calls"


def _wrap_decorated(builder: FixBuilder, model, decorated: ast.FunctionDef, operand: str) -> str:
    """Not every caller of a decorated kernel is known (`fn = body` handed to a wrapper, another module): the
    kernel is renamed `<name>_kernel`, and `<name>` becomes a function passing `operand` first and then what it
    is given, so every caller keeps calling `<name>` as before and `operand` is built at each call."""
    name = decorated.name
    if not isinstance(model.parents.get(decorated), (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
        raise CannotFix(f"not every caller of {name} can be found, and {name} is not defined in a module or function")
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            raise CannotFix(f"not every caller of {name} can be found, and an attribute of {name} is read")
    if len(decorated.decorator_list) > 1:
        raise CannotFix(f"not every caller of {name} can be found, and {name} has more than one decorator")
    file, _ = builder.file(model)
    node = file.function(decorated)
    block = file.parent(node) if node is not None else None
    if not isinstance(block, (cst.Module, cst.IndentedBlock)):
        raise CannotFix("the kernel body was not found")
    kernel = unique_name(model, model.tree, f"{name}_kernel")
    position = list(block.body).index(node)
    file.rewrite(node, lambda updated: updated.with_changes(name=cst.Name(kernel)))
    wrapper = cst.parse_statement(f"def {name}(*operands):\n{file.indent}return {kernel}({operand}, *operands)\n")
    blank = 2 if isinstance(block, cst.Module) and isinstance(model.parents.get(decorated), ast.Module) else 1

    def insert(updated):
        body = list(updated.body)
        body.insert(position + 1, wrapper.with_changes(leading_lines=[cst.EmptyLine()] * blank))
        return updated.with_changes(body=body)

    file.rewrite(block, insert)
    return f"wrapper:{kernel}"


def edit_sequence_keyword(builder: FixBuilder, entry, keyword: str, element: str, first: bool,
                          dict_key: str | None = None, add_if_missing: bool = False) -> str:
    """Put `element` first or last in the launch's `keyword=` list, tuple or dict (or a variable there)."""
    found = entry.kernel.kwarg(keyword)
    if found is not None and found[1] is None:
        raise CannotFix(f"{keyword} is not written at the launch")
    return edit_sequence_argument(builder, entry.model, entry.node, keyword, found[1] if found else None, element,
                                  first, dict_key, add_if_missing)


def edit_sequence_argument(builder: FixBuilder, model, call: ast.AST, keyword: str, node: ast.AST | None,
                           element: str, first: bool, dict_key: str | None = None,
                           add_if_missing: bool = False) -> str:
    """Put `element` first or last in `node`, the sequence or dict `call` passes as `keyword` (None: it passes
    none, and `keyword=[element]` is added where `add_if_missing`)."""
    file, _ = builder.file(model)
    if node is None:
        if not add_if_missing:
            return "absent"
        launch = file.find_ast(model, call, cst.Call)
        if launch is None:
            raise CannotFix("the call was not found")
        value = f"{{{dict_key!r}: {element}}}" if dict_key else f"[{element}]"

        def add_keyword(updated: cst.Call) -> cst.Call:
            new = cst.Arg(expression(value), keyword=cst.Name(keyword),
                          equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                whitespace_after=cst.SimpleWhitespace("")))
            return updated.with_changes(args=appended(list(updated.args), new))

        file.rewrite(launch, add_keyword)
        return "added"
    target = file.find_ast(model, node, cst.BaseExpression)
    if target is None:
        raise CannotFix(f"{keyword} was not found")
    if dict_key is not None:
        if isinstance(target, cst.Dict):
            file.rewrite(target, lambda updated: _dict_with(updated, dict_key, element))
            return "literal"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            file.rewrite(target, lambda updated: call_with_keyword(updated, dict_key, element))
            return "literal"
        file.rewrite(target, lambda updated: expression(f"{{**{_code(updated)}, {dict_key!r}: {element}}}"))
        return "variable"
    if isinstance(target, (cst.List, cst.Tuple)):
        file.rewrite(target, lambda updated: _sequence_with(updated, element, first))
        return "literal"
    if isinstance(target, cst.ListComp):  # `[VMEM(...) for _ in range(n)] + [DMA((n,))]`, as written by hand
        file.rewrite(target, lambda updated: expression(
            f"[{element}] + {_code(updated)}" if first else f"{_code(updated)} + [{element}]"))
        return "literal"
    held = _literal_held_for(model, node)
    if held is not None:  # `scratch = (A, B)` read here only: the element goes where the sequence is written
        literal = file.find_ast(model, held, cst.BaseExpression)
        if isinstance(literal, (cst.List, cst.Tuple)):
            file.rewrite(literal, lambda updated: _sequence_with(updated, element, first))
            return "literal"
    from .builder_scratch import collecting_call

    filled_by = collecting_call(model, node, element) if not first and dict_key is None else None
    site = file.find_ast(model, filled_by, cst.Call) if filled_by is not None else None
    if site is not None:  # `self._scratch` of a builder: this kernel's `.with_scratch(...)` call
        file.rewrite(site, lambda updated: updated.with_changes(args=appended(list(updated.args), cst.Arg(
            expression(element)))))
        return "builder"
    file.rewrite(target, lambda updated: expression(
        f"[{element}, *{_unpacked(updated)}]" if first else f"[*{_unpacked(updated)}, {element}]"))
    return "variable"


def _unpacked(node: cst.BaseExpression) -> str:
    """The code to unpack `node`'s items from: `plan(cols)` of `list(plan(cols))`, else `node`'s own."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("list", "tuple") \
            and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        return _code(node.args[0].value)
    return _code(node)


def _literal_held_for(model, node: ast.AST) -> ast.AST | None:
    """The list or tuple display a function's local name holds where it is its one binding there and this is its
    one read (`scratch = (A, B)`; `launch(..., scratch_types=scratch)`); None otherwise."""
    if not isinstance(node, ast.Name):
        return None
    binding = model.lookup(node.id, model.scope_of(node), node.lineno)
    assign = getattr(binding, "node", None)
    if binding is None or binding.kind != "assign" or not isinstance(assign, ast.Assign) or len(assign.targets) != 1 \
            or not isinstance(assign.targets[0], ast.Name) or not isinstance(assign.value, (ast.List, ast.Tuple)):
        return None
    scope = model.enclosing_function(assign)  # a module's constant may be imported elsewhere: left as it is
    if scope is None:
        return None
    same = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == node.id]
    if [n for n in same if isinstance(n.ctx, ast.Load)] != [node] or len(same) != 2:
        return None
    return assign.value


def _code(node: cst.CSTNode) -> str:
    from .cst_locate import code_of

    return code_of(node)


def _element_comma(element) -> cst.Comma:
    if element is not None and isinstance(element.comma, cst.Comma):
        return without_comment(element.comma)
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _brackets(sequence):
    """(opening whitespace, closing whitespace) inside a list's or a parenthesised tuple's brackets."""
    if isinstance(sequence, cst.List):
        return sequence.lbracket.whitespace_after, sequence.rbracket.whitespace_before
    if sequence.lpar and sequence.rpar:
        return sequence.lpar[0].whitespace_after, sequence.rpar[0].whitespace_before
    return None, None


def _with_closing(sequence, closing):
    if isinstance(sequence, cst.List):
        return sequence.with_changes(rbracket=sequence.rbracket.with_changes(whitespace_before=closing))
    rpar = list(sequence.rpar)
    rpar[0] = rpar[0].with_changes(whitespace_before=closing)
    return sequence.with_changes(rpar=rpar)


def _sequence_with(sequence, code: str, first: bool):
    elements = list(sequence.elements)
    # `*cfg.barrier_types`: the items of a sequence, each one more element
    new = cst.StarredElement(expression(code[1:])) if code.startswith("*") else cst.Element(expression(code))
    opening, closing = _brackets(sequence)
    one_per_line = isinstance(opening, cst.ParenthesizedWhitespace) and isinstance(closing, cst.ParenthesizedWhitespace)
    if one_per_line and elements:
        line_break = opening.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
        if first:
            elements.insert(0, new.with_changes(comma=cst.Comma(whitespace_after=line_break)))
            return sequence.with_changes(elements=elements)
        # The comment after the old last item sits before the closing bracket: it stays with that item.
        last = elements[-1]
        trailing = last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
        kept = line_break.with_changes(first_line=closing.first_line, empty_lines=closing.empty_lines)
        elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=kept))
        elements.append(new.with_changes(comma=trailing))
        closing = closing.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
        return _with_closing(sequence.with_changes(elements=elements), closing)
    if first:
        if elements:
            new = new.with_changes(comma=_element_comma(elements[0] if len(elements) > 1 or isinstance(
                elements[0].comma, cst.Comma) else None))
        elif isinstance(sequence, cst.Tuple):
            new = new.with_changes(comma=cst.Comma())
        elements.insert(0, new)
    else:
        if not elements and isinstance(sequence, cst.Tuple):
            new = new.with_changes(comma=cst.Comma())
        elements = appended(elements, new)
    return sequence.with_changes(elements=elements)


def _dict_with(mapping: cst.Dict, key: str, code: str) -> cst.Dict:
    quote = "'"
    for element in mapping.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
            quote = element.key.quote[-1]
            break
    new = cst.DictElement(cst.SimpleString(f"{quote}{key}{quote}"), expression(code))
    return mapping.with_changes(elements=appended(list(mapping.elements), new))


def call_with_keyword(call: cst.Call, key: str, code: str) -> cst.Call:
    new = cst.Arg(expression(code), keyword=cst.Name(key),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    return call.with_changes(args=appended(list(call.args), new))


def without_keyword(updated: cst.Call, keyword: str, what: str) -> cst.Call:
    """`updated` without its `keyword=` argument (the one before it then ends as it ended); `what` names the
    keyword in the refusal where the call has none."""
    index = next((i for i, a in enumerate(updated.args) if a.keyword is not None and a.keyword.value == keyword), None)
    if index is None:
        raise CannotFix(f"{what} was not found")
    return without_argument(updated, index)


def without_argument(call: cst.Call, index: int) -> cst.Call:
    """`call` without its argument at `index`; the one before takes a removed last one's comma (and line break)."""
    arguments = list(call.args)
    removed = arguments.pop(index)
    if index == len(arguments) and arguments:
        arguments[-1] = arguments[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=arguments)
