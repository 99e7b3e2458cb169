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
    """The call that builds the launch's grid spec, in `entry.model`; None when the launch has none. CannotFix
    where the grid spec is built where a fix cannot safely add to it, or in another module (see `grid_spec_site`)."""
    site = grid_spec_site(project, entry)
    if site is not None and site[0] is not entry.model:
        raise CannotFix("the grid spec is built in another module")
    return site[1] if site is not None else None


def grid_spec_site(project, entry) -> tuple[object, ast.Call] | None:
    """(its module, the call) that builds the launch's grid spec: at the launch, in a variable only it reads, or
    returned by a function (of any workspace module) only it calls; None when the launch has none. CannotFix
    where the grid spec is built where a fix cannot safely add to it."""
    found = entry.kernel.kwarg("grid_spec")
    if found is None:
        return None
    node, model = found[1], entry.model
    if node is None:
        raise CannotFix("the grid spec is not written at the launch, and JAX takes its scratch only there")
    call = _built_once(project, model, node) if isinstance(node, ast.Name) else node
    where = model
    if isinstance(call, ast.Call) and constructor(project, model, call) not in GRID_SPECS:
        where, call = _returned_by_helper(project, model, call) or (model, call)
    if not (isinstance(call, ast.Call) and constructor(project, where, call) in GRID_SPECS):
        raise CannotFix(f"the launch's grid spec comes from {model.segment(call, 40)}, not from a pl.GridSpec or "
                        "pltpu.PrefetchScalarGridSpec call at the launch, in a variable only it reads or returned by "
                        "a function only it calls, and JAX takes its scratch only in that call")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise CannotFix("the grid spec's arguments are unpacked (`*args`, `**kwargs`), so where its scratch "
                        "goes is not known")
    return where, call


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


def _returned_by_helper(project, model, call: ast.Call) -> tuple[object, ast.Call] | None:
    """(its module, the grid spec call) a function returns (`grid_spec=self._grid_spec()`,
    `grid_spec=specs.make_gather_spec(cfg)` of another workspace module), its one `return`, where this launch is
    the function's only caller in the workspace. CannotFix where others call it too."""
    func = project.evaluator.value(model, call.func)
    if not (isinstance(func, Func) and func.model is not None and isinstance(func.node, ast.FunctionDef)):
        return None
    home = func.model
    if home is not model and (home.path is None or not project.is_workspace_file(home.path)):
        return None  # a library's function: no place to edit
    returns = [n for n in ast.walk(func.node) if isinstance(n, ast.Return) and home.enclosing_function(n) is func.node]
    if len(returns) != 1 or returns[0].value is None:
        return None
    value = returns[0].value
    if isinstance(value, ast.Name):
        value = _built_once(project, home, value)
    if not (isinstance(value, ast.Call) and constructor(project, home, value) in GRID_SPECS):
        return None
    if [site for _, site, *_ in project.evaluator.call_sites_with_nodes(home, func.node)] != [call]:
        raise CannotFix(f"{func.node.name} builds the grid spec of other launches too, which the new scratch would "
                        "reach")
    return home, value


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


def code_in_spec(builder, model, spec: ast.Call, entry, code: str) -> str | None:
    """`code`, written for the launch, as the grid spec's builder (in `model`) writes it: as is where it means the
    same there (`written_in`); in a factory the launch calls (`grid_spec=_grid_spec(self.cfg, n)`), with each name or
    attribute path the launch passes it as an argument replaced by the factory's parameter (`self.cfg.block`
    there is `cfg.block`), and, where the factory is in another module, each module the launch's module imports
    spelled that module's way (imported there where it is not). None where a name has no counterpart there."""
    project, launch = builder.project, entry.model
    if model is launch and written_in(model, spec, entry, code):
        return code
    factory = model.enclosing_function(spec)
    found = entry.kernel.kwarg("grid_spec")
    call = found[1] if found else None
    if not (isinstance(factory, ast.FunctionDef) and isinstance(call, ast.Call) and code.isascii()
            and not factory.args.vararg and not factory.args.posonlyargs):
        return None
    given = _arguments_given(project, launch, call, factory)
    if given is None:
        return None
    passed = {}  # a name or attribute path at the launch (`cfg`, `self.cfg`) -> the factory parameter given it
    for argument, parameter in given:
        if isinstance(argument, (ast.Name, ast.Attribute)) and _path(argument) is not None:
            passed.setdefault(_path(argument), parameter)
    tree = ast.parse(code, mode="eval")
    replacements, stack = [], [tree.body]
    while stack:  # the outermost sub-expressions the launch passes the factory
        node = stack.pop()
        if isinstance(node, (ast.Name, ast.Attribute)) and _path(node) in passed:
            replacements.append((node, passed[_path(node)]))
            continue
        stack.extend(ast.iter_child_nodes(node))
    replaced = {id(n) for node, _ in replacements for n in ast.walk(node)}
    kept = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in replaced]
    if model is not launch:
        respelled = _imported_names(builder, launch, model, factory, spec.lineno, kept, entry)
        if respelled is None:
            return None
        replacements.extend(respelled)
    elif not _module_level(model, factory, spec.lineno, kept):
        return None
    lines = code.split("\n")
    for node, text in sorted(replacements, key=lambda r: (r[0].lineno, r[0].col_offset), reverse=True):
        if node.lineno != node.end_lineno:
            return None
        row = lines[node.lineno - 1]
        lines[node.lineno - 1] = row[:node.col_offset] + text + row[node.end_col_offset:]
    return "\n".join(lines)


def _arguments_given(project, launch, call: ast.Call, factory: ast.FunctionDef) -> list[tuple[ast.AST, str]] | None:
    """(the launch's argument, the factory parameter it binds) for each argument of `call`, the launch's call of
    `factory`; None where the call is not of it or unpacks its arguments."""
    func = project.evaluator.value(launch, call.func)
    if not (isinstance(func, Func) and func.node is factory) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    parameters = factory.args.args[1:] if getattr(func, "self_value", None) is not None else factory.args.args
    given = [*zip(call.args, (p.arg for p in parameters)), *((k.value, k.arg) for k in call.keywords if k.arg)]
    if parameters is not factory.args.args and isinstance(call.func, ast.Attribute):  # `self._grid_spec(...)`
        given.append((call.func.value, factory.args.args[0].arg))
    return given


def at_launch(project, model, spec: ast.Call, expression: ast.AST, entry) -> str | None:
    """`expression`, written in the grid spec's factory (in `model`, another module than the launch's), as the
    launch writes it: each name a parameter of the factory, replaced by the plain name or attribute path the
    launch passes it (`cfg.page_rows` there is `self.cfg.page_rows` at a launch passing `self.cfg`). None where
    another name is read."""
    factory = model.enclosing_function(spec)
    found = entry.kernel.kwarg("grid_spec")
    call = found[1] if found else None
    if not (isinstance(factory, ast.FunctionDef) and isinstance(call, ast.Call)):
        return None
    given = _arguments_given(project, entry.model, call, factory)
    if given is None:
        return None
    launch_paths = {parameter: _path(argument) for argument, parameter in given
                    if isinstance(argument, (ast.Name, ast.Attribute)) and _path(argument) is not None}
    text = ast.get_source_segment(model.text, expression)
    if text is None or not text.isascii() or expression.lineno != expression.end_lineno:
        return None
    names = [n for n in ast.walk(expression) if isinstance(n, ast.Name)]
    for name in names:
        binding = model.lookup(name.id, factory, name.lineno)
        if name.id not in launch_paths or binding is None or binding.kind != "param" \
                or not any(binding.node is arg for arg in factory.args.args + factory.args.kwonlyargs):
            return None
    for name in sorted(names, key=lambda n: n.col_offset, reverse=True):
        start, stop = name.col_offset - expression.col_offset, name.end_col_offset - expression.col_offset
        text = text[:start] + launch_paths[name.id] + text[stop:]
    return text


def _imported_names(builder, launch, model, factory: ast.FunctionDef, line: int, names: list[ast.Name],
                    entry) -> list[tuple[ast.Name, str]] | None:
    """Each of `names`, a module the launch's module imports at module level (`pltpu`, `jnp`) or a builtin, as
    `model` spells it inside `factory` (imported there where it is not); None where one is something else, or
    the factory's own names hide it."""
    from .imports import Imports

    aliases = {local: dotted for dotted, local in Imports(launch).local.items()}
    at_launch = launch.enclosing_function(entry.node) or launch.tree
    _, imports = builder.file(model)
    respelled = []
    for name in names:
        if not _module_level(launch, at_launch, entry.node.lineno, [name]):
            return None
        if name.id not in aliases:
            if not _module_level(model, factory, line, [name]):  # a builtin the factory does not shadow
                return None
            continue
        try:
            spelled = imports.name(aliases[name.id])
        except KeyError:  # no conventional import for it
            return None
        head = spelled.split(".")[0]
        binding = model.lookup(head, factory, line)
        if binding is not None and not any(binding is b for b in model.scopes[model.tree].bindings.get(head, [])):
            return None
        respelled.append((name, spelled))
    return respelled


def _path(node: ast.AST) -> str | None:
    """`self.cfg` of a name or a chain of attributes of one; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _path(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None
