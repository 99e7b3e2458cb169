"""Fix (PAL004): a `get_global` in a branch of `lax.cond` / `lax.switch` moves out of the branch, to
just before the branch function's definition; the branch uses the ref it names (a closure variable).

    def body(x_ref, o_ref):                      def body(x_ref, o_ref):
        def branch():                                sem = pl.get_global(REGULAR)
            sem = pl.get_global(REGULAR)   ->        def branch():
            pl.semaphore_signal(sem)                     pl.semaphore_signal(sem)
        lax.cond(pred, other, branch)                lax.cond(pred, other, branch)

Mosaic GPU lowers a cond's branches more than once and keeps what a get_global there reserved (a JAX
bug), so the kernel asks for more semaphores than JAX made room for. A global semaphore is one for
the whole kernel whichever branch runs: asking for it before the cond names the same semaphore.
Only where the get_global is `name = pl.get_global(T)` directly in the branch function, that function
is passed to one cond or switch (by name, in the function that defines it) and named nowhere else,
`name` is bound nowhere else in either function, and every name in `T` means the same before the cond.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.values import Api
from .kernel_edits import CannotFix, FixBuilder, remove_statement, statement_with_comment

_CONDS = ("jax.lax.cond", "lax.cond", "jax.lax.switch", "lax.switch")


def _cond_of(project, model, branch: ast.FunctionDef, outer: ast.FunctionDef) -> ast.stmt | None:
    """The statement of `outer` that runs the cond or switch `branch` is passed to, if that is the only
    place `branch` is named."""
    names = [n for n in ast.walk(outer) if isinstance(n, ast.Name) and n.id == branch.name]
    if len(names) != 1 or not isinstance(names[0].ctx, ast.Load):
        return None
    node, parent = names[0], model.parents.get(names[0])
    if isinstance(parent, (ast.List, ast.Tuple)):  # lax.switch(index, [a, b])
        node, parent = parent, model.parents.get(parent)
    if not (isinstance(parent, ast.Call) and node in parent.args[1:]):
        return None
    callee = project.evaluator.value(model, parent.func)
    if not (isinstance(callee, Api) and callee.name in _CONDS):
        return None
    statement = parent
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = model.parents.get(statement)
    return statement if statement in outer.body else None


def fix(project, model, finding):
    allocation = finding.facts.get("allocation")
    call = getattr(allocation, "node", None)
    if call is None or getattr(allocation, "kind", None) != "get_global" or call not in model.parents:
        return None
    if not allocation.repeat:
        # The finding's get_global overflows because one before it, in a branch lowered twice, reserved
        # twice: that one moves (the finding is reported at the first reservation over the estimate), in
        # whichever module it is (the finding's may be a helper's the kernel calls after the cond).
        twice = _repeated_get_global_sites(finding)
        if len(twice) == 1 and twice[0][1] is not call and twice[0][1] in twice[0][0].parents:
            model, call = twice[0]
    builder = FixBuilder(project)
    hoisted = hoist(project, model, builder, call)
    if hoisted is None:
        return None
    name, kind, branch = hoisted
    return builder.fix(f"pallas-lsp ({finding.code}): Ask for {name} before the {kind}, not in {branch}", "safe",
                       preferred=True)


def _repeated_get_globals(finding) -> list[ast.Call]:
    """The get_globals of the finding's kernel in a branch Mosaic GPU lowers twice (one node each)."""
    return [node for _, node in _repeated_get_global_sites(finding)]


def _repeated_get_global_sites(finding) -> list[tuple[object, ast.Call]]:
    """(module model, node) of each get_global of the finding's kernel in a branch Mosaic GPU lowers twice."""
    from ..analysis.kernel_model import flatten_allocations

    kernel = finding.facts.get("kernel")
    if kernel is None:
        return []
    found = {}
    for allocation in flatten_allocations(kernel.allocations):
        if allocation.repeat and allocation.kind == "get_global":
            found[id(allocation.node)] = (allocation.model, allocation.node)
    return list(found.values())


def hoist(project, model, builder: FixBuilder, call: ast.Call) -> tuple[str, str, str] | None:
    """Register the move of `call`'s `name = pl.get_global(...)` out of its branch with `builder`:
    (name, "cond" or "switch", the branch's name), None where `call` is in no cond's branch."""
    branch = model.enclosing_function(call)
    outer = model.enclosing_function(branch) if isinstance(branch, ast.FunctionDef) else None
    if not isinstance(outer, ast.FunctionDef):
        return None
    statement = model.parents.get(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and statement in branch.body):
        return None
    cond = _cond_of(project, model, branch, outer)
    if cond is None:
        return None  # not in a cond's branch (or not only there): another fix's case
    name = statement.targets[0].id
    for function in (branch, outer):
        bound = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name
                 and not isinstance(n.ctx, ast.Load)]
        if len(bound) != 1 or any(
                isinstance(a, ast.arg) and a.arg == name for a in ast.walk(function)):
            raise CannotFix(f"{name} is bound more than once")
    defaults = _defaults_taken(model, branch, cond)
    carried = [local for local in (_local_type(model, branch, outer, statement, node) for node in ast.walk(call)
                                   if isinstance(node, ast.Name) and node.id not in defaults) if local is not None]
    for node in [n for c in (*(local.value for local in carried), call) for n in ast.walk(c)]:
        if isinstance(node, ast.Name) and node.id not in defaults and node.id not in {
                local.targets[0].id for local in carried}:
            inside = model.lookup(node.id, model.scope_of(call), call.lineno)
            before = model.lookup(node.id, model.scope_of(cond), cond.lineno)
            # Both None: bound in no enclosing scope (a star import, a builtin), the same name either way.
            if inside is not before:
                raise CannotFix(f"{node.id} means something else before the {ast.unparse(cond)[:20]}...")
    file, _ = builder.file(model)
    line = file.find_ast(model, cond, cst.BaseStatement)
    if line is None:
        raise CannotFix("the cond's statement was not found")
    definition = file.function(branch)
    if definition is None or file.parent(definition) is not file.parent(line):
        raise CannotFix("the branch is not defined in the block that runs the cond")
    moved = [cst.parse_statement(statement_with_comment(builder, model, s) + "\n") for s in [*carried, statement]]
    if defaults:  # `def branch(what=T): sem = pl.get_global(what)`: the cond passes nothing, so `what` is T
        moved = [m.visit(_Substitute({k: cst.parse_expression(v) for k, v in defaults.items()})) for m in moved]
    block = file.parent(line)
    position = list(block.body).index(definition)

    def insert(updated):
        body = list(updated.body)
        body[position:position] = moved  # the definition keeps its comments, after them
        return updated.with_changes(body=body)

    for each in [statement, *reversed(carried)]:  # the later statement first: the earlier one's place still holds
        remove_statement(builder, model, each, keep_comment=False)  # the comment moves with it
    file.rewrite(block, insert)
    return name, _kind(project, model, cond), branch.name


def _local_type(model, branch: ast.FunctionDef, outer: ast.FunctionDef, statement: ast.stmt,
                name: ast.Name) -> ast.Assign | None:
    """`what = T` in the branch, before the get_global statement, where `what` is bound once there and nowhere in
    `outer`, and read only by the get_global: the statement the get_global's type needs, moved with it."""
    binding = model.lookup(name.id, model.scope_of(name), name.lineno)
    local = binding.node if binding is not None and binding.kind == "assign" else None
    if not (isinstance(local, ast.Assign) and local in branch.body and len(local.targets) == 1
            and isinstance(local.targets[0], ast.Name) and branch.body.index(local) < branch.body.index(statement)):
        return None
    uses = [n for n in ast.walk(outer) if isinstance(n, ast.Name) and n.id == name.id]  # the branch's included
    if len(uses) != 2 or any(isinstance(a, ast.arg) and a.arg == name.id for a in ast.walk(outer)):
        return None  # bound again, read elsewhere, or a name of outer's too: it stays (and the move is refused)
    return local


def _defaults_taken(model, branch: ast.FunctionDef, cond: ast.stmt) -> dict[str, str]:
    """{parameter: its default's code} of `branch` where the cond passes it no operands (lax.cond's
    three arguments, lax.switch's two, no keywords): every parameter then takes its default."""
    args = branch.args
    calls = [n for n in ast.walk(cond) if isinstance(n, ast.Call) and any(
        isinstance(a, ast.Name) and a.id == branch.name or isinstance(a, (ast.List, ast.Tuple))
        and any(isinstance(e, ast.Name) and e.id == branch.name for e in a.elts) for a in n.args)]
    if len(calls) != 1 or calls[0].keywords or len(calls[0].args) > 3 or (
            len(calls[0].args) == 3 and isinstance(calls[0].args[1], (ast.List, ast.Tuple))):
        return {}
    if args.posonlyargs or args.vararg or args.kwarg or len(args.defaults) != len(args.args):
        return {}
    found = {a.arg: ast.get_source_segment(model.text, d) for a, d in zip(args.args, args.defaults)}
    found.update({a.arg: ast.get_source_segment(model.text, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                  if d is not None})
    return {name: code for name, code in found.items() if code is not None}


class _Substitute(cst.CSTTransformer):
    def __init__(self, values: dict[str, cst.BaseExpression]):
        super().__init__()
        self.values = values

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.values.get(original.value, updated)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # `x.what`: only the base is a name that can be a parameter (leave_Attribute)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(value=original.value.visit(self))


def _kind(project, model, statement: ast.stmt) -> str:
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            callee = project.evaluator.value(model, node.func)
            if isinstance(callee, Api) and callee.name in _CONDS:
                return callee.name.split(".")[-1]
    return "cond"
