"""Fix (PAL001/PAL002): a body's optional scratch parameter with a get_global fallback gets its scratch from every
launch, and the fallback goes.

    def body(x_ref, o_ref, acc=None, *, block):          def body(x_ref, o_ref, acc, *, block):
        if acc is None:                                      ...
            acc = pl.get_global(plgpu.SMEM((block,), f32))
        ...                                        ->
    tuned = plgpu.kernel(partial(body, block=block),      (as it was)
                         scratch_types=[plgpu.SMEM((block,), f32)])
    fast = plgpu.kernel(partial(body, block=n))           fast = plgpu.kernel(partial(body, block=n),
                                                                              scratch_types=[plgpu.SMEM((n,), f32)])

A launch that gives the body no scratch leaves the parameter None, and the body asks get_global for the buffer
(which JAX refuses for on-chip memory); a launch that gives it scratch passes the last scratch ref there. So each
launch without scratch gets the type the fallback asks for, written with what that launch binds (`block=n`:
`(n,)`), the same buffer for every configuration; then every launch passes the parameter, and the `if` and the
`None` default are dead. Only where the parameter is the body's last positional one and its only one with a
default, each launch gives it alone as a list it writes (or no scratch), and the type can be written at each launch
from what it binds.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS, TPU_TC, compiled_backend
from ..analysis.values import MemType
from .grid_spec import grid_spec_site
from .kernel_edits import CannotFix, FixBuilder, edit_sequence_keyword
from .sites import locate
from .type_in_scope import type_at_launches

_ON_CHIP = {"smem", "tmem", "regs", "vmem"}


def _fallback(model, call: ast.Call) -> tuple[ast.If, ast.FunctionDef, ast.arg] | None:
    """(`if p is None:`, the body, p) where the get_global is `p = pl.get_global(T)`, the one statement of an `if p
    is None:` with no else, `p` the body's last positional parameter, defaulting to None."""
    statement = model.parents.get(call)
    branch = model.parents.get(statement)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and isinstance(branch, ast.If)
            and branch.body == [statement] and not branch.orelse):
        return None
    name = statement.targets[0].id
    test = branch.test
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == name
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return None
    function = model.enclosing_function(branch)
    if not isinstance(function, ast.FunctionDef) or model.parents.get(branch) is not function:
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    defaults = function.args.defaults
    if not (positional and positional[-1].arg == name and len(defaults) == 1 and isinstance(defaults[-1], ast.Constant)
            and defaults[-1].value is None and function.args.vararg is None):
        return None  # one optional parameter: a launch with no scratch fills all the others
    return branch, function, positional[-1]


def fix(project, model, call: ast.Call, value, code: str):
    if code not in ("PAL001", "PAL002") or not isinstance(value, MemType) or value.space not in _ON_CHIP:
        return None
    found = _fallback(model, call)
    if found is None or len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return None
    branch, body, parameter = found
    located = locate(project, model, call)
    if located is None:
        return None
    _, _, entries = located
    apis = {e.api for e in entries}
    if len(apis) != 1 or not apis <= {"plgpu.kernel", "pl.pallas_call"}:
        return None
    if "pl.pallas_call" in apis and not all(compiled_backend(project, e) == TPU_TC or e.interpret for e in entries):
        return None  # a Triton pallas_call takes no scratch
    keyword = SCRATCH_KEYWORDS[entries[0].api].keyword
    needing = []
    for entry in entries:
        if not runs_body(entry, body):
            raise CannotFix("a launch runs another body")
        if grid_spec_site(project, entry) is not None:
            raise CannotFix("a launch takes its scratch in a grid spec")
        given = entry.kernel.kwarg(keyword)
        if given is None:
            needing.append(entry)
        elif not (isinstance(given[1], (ast.List, ast.Tuple)) and given[1].elts):
            raise CannotFix(f"a launch's {keyword} is not a list it writes, so whether it gives {parameter.arg} is "
                            "not known")
        elif len(given[1].elts) != 1 or any(isinstance(e, ast.Starred) for e in given[1].elts):
            # A launch without scratch fills every parameter but this one; one giving two would fill another too.
            raise CannotFix(f"a launch gives more scratch than {parameter.arg}, so which parameter each fills is not "
                            "known")
    if not needing:
        return None
    builder = FixBuilder(project)
    for entry in needing:
        type_code = type_at_launches(project, model, call.args[0], [entry])
        if type_code is None:
            raise CannotFix(f"the type the fallback asks for cannot be written at the launch in "
                            f"{_launcher(entry)}")
        edit_sequence_keyword(builder, entry, keyword, type_code, first=False, add_if_missing=True)
    remove_statement_block(builder, model, branch)
    _without_default(builder, model, body, parameter)
    where = ", ".join(dict.fromkeys(_launcher(e) for e in needing))
    return builder.fix(f"pallas-lsp ({code}): Allocate {parameter.arg} as scratch ({keyword}) in {where} too, as "
                       f"the other launches do; the get_global fallback goes", "safe", preferred=True)


def runs_body(entry, body: ast.FunctionDef) -> bool:
    """The launch's body is `body` behind partials."""
    value = entry.body
    while hasattr(value, "func"):
        value = value.func
    return getattr(value, "node", None) is body


def _launcher(entry) -> str:
    function = entry.model.enclosing_function(entry.node)
    return getattr(function, "name", None) or "the module"


def remove_statement_block(builder: FixBuilder, model, statement: ast.stmt) -> None:
    """Remove a compound statement (the `if` of the fallback) from its block, its comments above kept."""
    file, _ = builder.file(model)
    node = file.find_ast(model, statement, cst.If)
    block = file.parent(node) if node is not None else None
    if not isinstance(block, cst.IndentedBlock) or node not in block.body:
        raise CannotFix("the fallback's `if` was not found")
    position = list(block.body).index(node)

    def drop(updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = list(updated.body)
        removed = body.pop(position)
        comments = [line for line in removed.leading_lines if line.comment is not None]
        if not body:
            body = [cst.SimpleStatementLine([cst.Pass()])]
        elif position < len(body):
            body[position] = body[position].with_changes(leading_lines=[*comments, *body[position].leading_lines])
        return updated.with_changes(body=body)

    file.rewrite(block, drop)


def _without_default(builder: FixBuilder, model, function: ast.FunctionDef, parameter: ast.arg) -> None:
    """`acc=None` -> `acc`: every launch passes it now."""
    file, _ = builder.file(model)
    node = file.function(function)
    if node is None:
        raise CannotFix(f"{function.name} was not found")
    params = node.params

    def change(updated: cst.FunctionDef) -> cst.FunctionDef:
        given = updated.params
        items = [p.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT) if p.name.value == parameter.arg else p
                 for p in given.params]
        return updated.with_changes(params=given.with_changes(params=items))

    if not any(p.name.value == parameter.arg for p in params.params):
        raise CannotFix(f"{parameter.arg} was not found")
    file.rewrite(node, change)

