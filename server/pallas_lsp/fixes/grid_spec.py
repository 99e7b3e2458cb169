"""Scratch of a `pallas_call` whose specs live in a grid spec (`grid_spec=pltpu.PrefetchScalarGridSpec(...)`,
`pl.GridSpec(...)`): JAX takes the scratch there and nowhere else (jax 0.12, next to a grid spec:
"If `grid_spec` is specified, then `scratch_shapes` must be `()`"), so a fix that allocates scratch adds it
to the grid spec's own `scratch_shapes`, where the grid spec is built: at the launch, or in one assignment
of a variable that only this launch reads (else the new scratch would reach other launches: refused).
"""

from __future__ import annotations

import ast
import builtins

from ..analysis.values import Api, Func
from .cst_locate import CannotFix

# Grid spec constructors and the position of `scratch_shapes` among their positional parameters.
GRID_SPECS = {"pl.GridSpec": 3, "pltpu.PrefetchScalarGridSpec": 4}


def grid_spec_call(project, entry) -> ast.Call | None:
    """The call that builds the launch's grid spec (in `entry.model`); None when the launch has none.
    CannotFix where the grid spec is built where a fix cannot safely add to it."""
    found = entry.kernel.kwarg("grid_spec")
    if found is None:
        return None
    node, model = found[1], entry.model
    if node is None:
        raise CannotFix("the grid spec is not written at the launch, and JAX takes its scratch only there")
    call = _built_once(project, model, node) if isinstance(node, ast.Name) else node
    if isinstance(call, ast.Call) and constructor(project, model, call) not in GRID_SPECS:
        call = _returned_by_helper(project, model, call) or call
    if not (isinstance(call, ast.Call) and constructor(project, model, call) in GRID_SPECS):
        raise CannotFix(f"the launch's grid spec comes from {model.segment(call, 40)}, not from a pl.GridSpec or "
                        "pltpu.PrefetchScalarGridSpec call at the launch, in a variable only it reads or returned by "
                        "a function only it calls, and JAX takes its scratch only in that call")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise CannotFix("the grid spec's arguments are unpacked (`*args`, `**kwargs`), so where its scratch "
                        "goes is not known")
    return call


def scratch_argument(project, model, call: ast.Call) -> ast.AST | None:
    """The grid spec call's `scratch_shapes` as written (positional or keyword); None where it passes none."""
    position = GRID_SPECS[constructor(project, model, call)]
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == "scratch_shapes"), None)


def constructor(project, model, call: ast.Call) -> str | None:
    """The API a call calls (`pltpu.PrefetchScalarGridSpec`), not the value it returns: a helper that returns a
    grid spec is no place to add to."""
    func = project.evaluator.value(model, call.func)
    return func.name if isinstance(func, Api) else None


def _returned_by_helper(project, model, call: ast.Call) -> ast.Call | None:
    """The grid spec call a function of this module returns (`grid_spec=self._grid_spec()`), its one `return`,
    where this launch is the function's only caller. CannotFix where others call it too."""
    func = project.evaluator.value(model, call.func)
    if not (isinstance(func, Func) and func.model is model and isinstance(func.node, ast.FunctionDef)):
        return None
    returns = [n for n in ast.walk(func.node) if isinstance(n, ast.Return) and model.enclosing_function(n) is func.node]
    if len(returns) != 1 or returns[0].value is None:
        return None
    value = returns[0].value
    if isinstance(value, ast.Name):
        value = _built_once(project, model, value)
    if not (isinstance(value, ast.Call) and constructor(project, model, value) in GRID_SPECS):
        return None
    if [site for _, site, *_ in project.evaluator.call_sites_with_nodes(model, func.node)] != [call]:
        raise CannotFix(f"{func.node.name} builds the grid spec of other launches too, which the new scratch would "
                        "reach")
    return value


def written_in(model, spec: ast.Call, entry, code: str) -> bool:
    """`code`, written for the launch, means the same where the grid spec is built: the same function, or a helper
    where each of its names is a module-level (or builtin) one."""
    where = model.enclosing_function(spec)
    if where is model.enclosing_function(entry.node):
        return True
    return _module_level(model, where, spec.lineno,
                         [n for n in ast.walk(ast.parse(code, mode="eval")) if isinstance(n, ast.Name)])


def _module_level(model, where: ast.AST, line: int, names: list[ast.Name]) -> bool:
    """Each of `names` is, seen from `where` at `line`, a module-level (or builtin) one."""
    for name in names:
        binding = model.lookup(name.id, where, line)
        if binding is not None and not any(binding is b for b in model.scopes[model.tree].bindings.get(name.id, [])):
            return False
        if binding is None and name.id not in dir(builtins):
            return False
    return True


def _built_once(project, model, name: ast.Name) -> ast.AST:
    """The value a grid spec variable is assigned once, in the launch's module, and read by this launch only."""
    binding = model.lookup(name.id, model.scope_of(name), name.lineno)
    where = f"{name.id} is built"
    if binding is None or binding.kind != "assign" or binding.value is None:
        raise CannotFix(f"the grid spec {name.id} is not built in this module, and JAX takes its scratch only in it")
    scope = model.scope_of(binding.node)
    if len(model.scopes[scope].bindings.get(name.id, [])) != 1:
        raise CannotFix(f"the grid spec {where} more than once, so which one the launch gets is not known")
    reads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name.id
             and isinstance(n.ctx, ast.Load) and model.lookup(n.id, model.scope_of(n), n.lineno) is binding]
    shared = reads != [name] or (isinstance(scope, ast.Module)
                                 and any(name.id in other.text for other in project.importers(model)))
    if shared:
        raise CannotFix(f"the grid spec {name.id} is used by other code too, which the new scratch would reach")
    return binding.value


def code_in_spec(project, model, spec: ast.Call, entry, code: str) -> str | None:
    """`code`, written for the launch, as the grid spec's builder writes it: as is where it means the same there
    (`written_in`); in a factory the launch calls (`grid_spec=_grid_spec(self.cfg, n)`), with each name or
    attribute path the launch passes it as an argument replaced by the factory's parameter (`self.cfg.block`
    there is `cfg.block`). None where a name has no counterpart there."""
    if written_in(model, spec, entry, code):
        return code
    factory = model.enclosing_function(spec)
    found = entry.kernel.kwarg("grid_spec")
    call = found[1] if found else None
    if not (isinstance(factory, ast.FunctionDef) and isinstance(call, ast.Call) and code.isascii()
            and not factory.args.vararg and not factory.args.posonlyargs):
        return None
    func = project.evaluator.value(model, call.func)
    if not (isinstance(func, Func) and func.node is factory) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    passed = {}  # a name or attribute path at the launch (`cfg`, `self.cfg`) -> the factory parameter given it
    parameters = factory.args.args[1:] if getattr(func, "self_value", None) is not None else factory.args.args
    given = [*zip(call.args, (p.arg for p in parameters)), *((k.value, k.arg) for k in call.keywords if k.arg)]
    if parameters is not factory.args.args and isinstance(call.func, ast.Attribute):  # `self._grid_spec(...)`
        given.append((call.func.value, factory.args.args[0].arg))
    for argument, parameter in given:
        if isinstance(argument, (ast.Name, ast.Attribute)) and _path(argument) is not None:
            passed.setdefault(_path(argument), parameter)
    tree = ast.parse(code, mode="eval")
    names, stack = [], [tree.body]
    while stack:  # the outermost sub-expressions the launch passes the factory
        node = stack.pop()
        if isinstance(node, (ast.Name, ast.Attribute)) and _path(node) in passed:
            names.append(node)
            continue
        stack.extend(ast.iter_child_nodes(node))
    lines = code.split("\n")
    for node in sorted(names, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        if node.lineno != node.end_lineno:
            return None
        row = lines[node.lineno - 1]
        lines[node.lineno - 1] = row[:node.col_offset] + passed[_path(node)] + row[node.end_col_offset:]
    carried = "\n".join(lines)
    replaced = {id(n) for node in names for n in ast.walk(node)}
    kept = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in replaced]
    return carried if _module_level(model, factory, spec.lineno, kept) else None


def _path(node: ast.AST) -> str | None:
    """`self.cfg` of a name or a chain of attributes of one; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _path(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None
