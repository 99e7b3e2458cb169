"""The buffer type a fix moves to a launch, written with what the launch already holds.

A `get_global(self.cfg.tile)`, `get_global(smem((cfg.block_m, cfg.block_n)))` or `get_global(tile_type(cfg))`
builds its type for whichever configuration the kernel is built with; spelled from the value the analysis
sees (`plgpu.SMEM((128, 128), jnp.bfloat16)`) it would hold for the default configuration only, and break
the others. So each name of the argument is carried to the launch: kept where the launch sees the same
binding (a module name, a closure variable of the function that launches a nested body), replaced by what
the launch binds it to where it is the body's parameter (the instance of a bound method, `self._body`; a
`functools.partial`'s argument), and a local variable of the body by the expression it was assigned.
"""

from __future__ import annotations

import ast
import builtins

from ..analysis.values import Api, Func, Instance, Partial
from .built_block_shape import inlined_shape, is_block_shape
from .ref_at_launch import constant_index, folded, item_of, ref_attribute_at_launch, ref_stand_in

_MAX_DEPTH = 3  # local variables followed to what they were assigned, one inside another


def type_at_launches(project, model, argument: ast.AST, entries, hoisted: list | None = None) -> str | None:
    """The argument's code as every launch can write it (one text for all), or None where some name of it has
    no counterpart at a launch. With `hoisted` (a list to fill), a local of the body the type reads more than
    once and computes by a call (`acc_aval = accumulator_type(x_ref.shape, x_ref.dtype)`, read as
    `pltpu.VMEM(acc_aval.shape, acc_aval.dtype)`) keeps its name, and `hoisted` gets (name, its code at the
    launch): a statement the fix writes before each launch, as an author would, rather than the call twice."""
    results = []
    for entry in entries:
        own: dict[int, tuple[str, str]] | None = {} if hoisted is not None else None
        code = _at_launch(project, model, argument, entry, 0, own)
        results.append((code, tuple((own or {}).values())))
    if len(set(results)) != 1 or results[0][0] is None:
        return None
    if hoisted is not None:
        hoisted.extend(results[0][1])
    return results[0][0]


def depends_on_a_variable(project, model, node: ast.AST, depth: int = 0) -> str | None:
    """The first name in `node` whose value may differ between runs (a parameter some call passes, a loop or
    `with` target, a local assigned from one): spelled from the value the analysis sees, the type would hold for
    one of them only. None where every name is a module-level or builtin one, a local assigned from those, or a
    parameter no call passes (its default)."""
    for name in (n for n in ast.walk(node) if isinstance(n, ast.Name)):
        binding = model.lookup(name.id, model.scope_of(name), name.lineno)
        if binding is None or any(binding is b for b in model.scopes[model.tree].bindings.get(name.id, [])):
            continue
        value = binding.value if binding.kind == "assign" else _default(project, model, binding.node)
        if value is not None and depth < _MAX_DEPTH and depends_on_a_variable(project, model, value, depth + 1) is None:
            continue
        return name.id
    return None


def _default(project, model, parameter: ast.AST) -> ast.AST | None:
    """The default of a parameter that keeps it: one of a lambda (`lambda kind=T: pl.get_global(kind)`, which the
    fixes take only where it is called once with no argument), or of a function no call in the workspace passes
    it to (a kernel body JAX calls with its refs only, a helper called as `get_sem()`)."""
    arguments = model.parents.get(parameter)
    function = model.parents.get(arguments)
    if not (isinstance(parameter, ast.arg) and isinstance(arguments, ast.arguments)
            and isinstance(function, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef))):
        return None
    positional = [*arguments.posonlyargs, *arguments.args]
    if any(parameter is arg for arg in positional):
        index = next(i for i, arg in enumerate(positional) if arg is parameter)
        default_at = index - (len(positional) - len(arguments.defaults))
        default = arguments.defaults[default_at] if default_at >= 0 else None
    elif any(parameter is arg for arg in arguments.kwonlyargs):
        index = None
        default = arguments.kw_defaults[next(i for i, arg in enumerate(arguments.kwonlyargs) if arg is parameter)]
    else:
        return None
    if default is None or isinstance(function, ast.Lambda):
        return default
    method = model.enclosing_class(function) is not None and bool(positional) and positional[0].arg == "self"
    for _, call, _, _, _ in project.evaluator.call_sites_with_nodes(model, function):
        offset = 1 if method and isinstance(call.func, ast.Attribute) else 0
        passed = (any(k.arg in (None, parameter.arg) for k in call.keywords)
                  or any(isinstance(a, ast.Starred) for a in call.args)
                  or (index is not None and len(call.args) + offset > index))
        if passed:
            return None
    return default


def _at_launch(project, model, expression: ast.AST, entry, depth: int,
               hoisted: dict[int, tuple[str, str]] | None = None) -> str | None:
    if entry.model is not model:
        hoisted = None  # no statement is written before a launch of another module: the code is carried whole
    replacements: dict[int, tuple[ast.AST, str]] = {}
    launch_scope = entry.model.scope_of(entry.node)
    carried: set[int] = set()  # names inside a `ref.shape` replaced whole
    for node in ast.walk(expression):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)):
            return None  # names bound inside the expression
        if id(node) in carried:
            continue
        if isinstance(node, ast.Subscript) and _is_ref_attribute(node.value) and node.value.attr == "shape" \
                and constant_index(node.slice) is not None:
            code = _ref_attribute(project, model, node.value, entry)
            item = item_of(code, constant_index(node.slice)) if code is not None else None
            if item is None and code is not None:  # a block shape a call builds: the item the call returns
                inlined = _ref_attribute(project, model, node.value, entry, inline=True)
                item = item_of(inlined, constant_index(node.slice)) if inlined is not None else None
            if item is not None:  # `x_ref.shape[1]` of a block `(block_rows, hidden)`: `hidden`
                replacements[id(node)] = (node, item)
                carried.update((id(node.value), id(node.value.value)))
            continue
        if _is_ref_attribute(node):
            code = _ref_attribute(project, model, node, entry)
            if code is not None and node.attr == "dtype" and not code.endswith(".dtype") \
                    and not _takes_a_scalar_type(project, model, node):
                return None  # `jnp.float32` is a class, not a dtype: the helper reads what it has not
            if code is not None:
                replacements[id(node)] = (node, code)
                carried.add(id(node.value))
            continue
        if not isinstance(node, ast.Name) or id(node) in carried:
            continue
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        if binding is None:
            if node.id in dir(builtins) and entry.model.lookup(node.id, launch_scope, entry.node.lineno) is None:
                continue
            return None
        if same_name_at_launch(model, binding, node.id, entry):
            continue
        qualified = module_attribute_at_launch(model, binding, node.id, entry)
        if qualified is not None:  # `_running_best` of the kernel module, at an ops launch: `kernel._running_best`
            replacements[id(node)] = (node, qualified)
            continue
        code = _bound_at_launch(project, model, binding, entry) if binding.kind == "param" else None
        if code is None and binding.kind == "param" and _only_its_type_read(project, model, node):
            code = ref_stand_in(project, model, binding, entry)  # `acc_type(tile)`: `acc_type(plgpu.SMEM(...))`
        if code is None and binding.kind == "param" and depth < _MAX_DEPTH:
            code = _passed_by_one_call(project, model, binding, entry, depth)
        if code is None and binding.kind == "assign" and binding.value is not None and depth < _MAX_DEPTH:
            if id(binding) in (hoisted or {}):
                code = hoisted[id(binding)][0]
            elif hoisted is not None and _read_again(model, expression, node, binding):
                value = _at_launch(project, model, binding.value, entry, depth + 1)
                free = _free_at_launch(model, entry, node.id, value) if value is not None else None
                if free is not None:
                    hoisted[id(binding)] = (node.id, value if free else "")
                    code = node.id
            if code is None:
                code = _at_launch(project, model, binding.value, entry, depth + 1)
        if code is None and depth < _MAX_DEPTH:
            code = _unpacked_at_launch(project, model, binding, entry, depth)
        if code is None:
            return None
        replacements[id(node)] = (node, code)
    substituted = _substituted(model, expression, list(replacements.values()))
    return folded(substituted) if replacements else substituted


def _takes_a_scalar_type(project, model, node: ast.expr) -> bool:
    """A dtype written as a scalar type (`jnp.float32`) means the same as the ref's `.dtype` where `node` is given
    to a JAX API (a constructor, `jnp.zeros`) or compared, or to a workspace function that never reads an
    attribute of that parameter (`match jnp.dtype(dtype).name` does not; `dtype.itemsize` would)."""
    parent = model.parents.get(node)
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.keyword):  # `plgpu.SMEM(shape, dtype=o_ref.dtype)`: a JAX API's keyword only
        call = model.parents.get(parent)
        return isinstance(call, ast.Call) and isinstance(project.evaluator.value(model, call.func), Api)
    if isinstance(parent, ast.Call) and node is not parent.func \
            and isinstance(project.evaluator.value(model, parent.func), Api):
        return True
    attributes = _attributes_read_of_argument(project, model, node)
    return attributes is not None and attributes <= {None}


def _only_its_type_read(project, model, name: ast.Name) -> bool:
    """`name` is an argument of a workspace function (`acc_type(tile)`) that reads only its `.shape` and `.dtype`:
    anything else with those attributes (the ref's type at the launch) means the same to it."""
    attributes = _attributes_read_of_argument(project, model, name)
    return bool(attributes) and None not in attributes and attributes <= {"shape", "dtype"}


def _attributes_read_of_argument(project, model, argument: ast.expr) -> set | None:
    """The attributes the workspace function `argument` is given to (positionally: `helper(tile)`) reads of its
    parameter, None in the set for a read that is no attribute; None where that function is not known."""
    call = model.parents.get(argument)
    if not (isinstance(call, ast.Call) and argument in call.args) or call.keywords \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    callee = project.evaluator.value(model, call.func)
    function = getattr(callee, "node", None)
    if not (isinstance(callee, Func) and callee.self_value is None and isinstance(function, ast.FunctionDef)):
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    index = call.args.index(argument)
    if index >= len(positional):
        return None
    parents = callee.model.parents
    reads = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == positional[index].arg]
    return {parents[n].attr if isinstance(parents.get(n), ast.Attribute) and parents[n].value is n else None
            for n in reads}


def _read_again(model, expression: ast.AST, name: ast.Name, binding) -> bool:
    """`name`, a local assigned by a call, is read more than once in `expression`: written twice at the launch,
    the call would be too."""
    if not isinstance(binding.value, ast.Call):
        return False
    reads = [n for n in ast.walk(expression) if isinstance(n, ast.Name) and n.id == name.id
             and model.lookup(n.id, model.scope_of(n), n.lineno) is binding]
    return len(reads) > 1


def same_name_at_launch(model, binding, name: str, entry) -> bool:
    """`name` (bound by `binding` in `model`) means the same at the launch: the same binding in the same module;
    in a launch of another module, the same import there (`jnp`, `pltpu`), or the module-level name imported there
    from `model` (`from r12_rms_kernel import LANES`)."""
    launch_side = entry.model.lookup(name, entry.model.scope_of(entry.node), entry.node.lineno)
    if entry.model is model or launch_side is None:
        return launch_side is binding
    if launch_side.kind != "import" or not any(binding is b for b in model.scopes[model.tree].bindings.get(name, [])):
        return False
    if binding.kind == "import":
        return _imported(binding) is not None and _imported(binding) == _imported(launch_side)
    source = launch_side.import_from
    return (isinstance(source, ast.ImportFrom) and source.module is not None and model.module_name is not None
            and (source.module == model.module_name or model.module_name.endswith(f".{source.module}"))
            and getattr(launch_side.node, "name", None) == name)


def module_attribute_at_launch(model, binding, name: str, entry) -> str | None:
    """A module-level function or class of `model` (not an import) as a launch in another module writes it: through
    the module import there (`import r13_greedy_kernel as kernel`: `kernel._running_best`). None otherwise."""
    if entry.model is model or binding.kind not in ("def", "class") or model.module_name is None or not any(
            binding is b for b in model.scopes[model.tree].bindings.get(name, [])):
        return None
    scope = entry.model.scope_of(entry.node)
    for statement in entry.model.tree.body:
        if not isinstance(statement, ast.Import):
            continue
        for alias in statement.names:
            local = alias.asname or alias.name
            if alias.name == model.module_name and (alias.asname or "." not in alias.name) \
                    and entry.model.lookup(local, scope, entry.node.lineno) is not None:
                return f"{local}.{name}"
    return None


def _imported(binding) -> str | None:
    """What an import binding names: `jax.numpy` of `import jax.numpy as jnp`, `jax.experimental.pallas.tpu` of
    `from jax.experimental.pallas import tpu as pltpu` (None for a relative import)."""
    statement, alias = binding.import_from, binding.node
    if not isinstance(alias, ast.alias):
        return None
    if isinstance(statement, ast.Import):
        return alias.name
    if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
        return f"{statement.module}.{alias.name}"
    return None


def _free_at_launch(model, entry, wanted: str, value: str) -> bool | None:
    """Whether a statement before the launch can bind `wanted` to `value`: True where the launch's function binds
    and reads no such name, False where it already binds it so, once, before the launch (an earlier fix's), None
    otherwise. Only for a launch written in a function's own statements (not in a lambda or a comprehension,
    whose names the statement would not see)."""
    scope = model.scope_of(entry.node)
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    node = entry.node
    while not isinstance(node, ast.stmt):
        node = model.parents.get(node)
        if node is None or isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return None
    bindings = model.scopes[scope].bindings.get(wanted, [])
    if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None \
            and ast.get_source_segment(model.text, bindings[0].value) == value \
            and model.parents.get(bindings[0].value) in getattr(model.parents.get(node), "body", ()) \
            and bindings[0].node.lineno < node.lineno:
        return False
    used = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(scope) if isinstance(a, ast.arg)}
    if wanted in used or model.module_binding(wanted) is not None or wanted in dir(builtins):
        return None
    return True


def launch_statement(model, entry) -> ast.stmt | None:
    """The statement of the launch's function the launch is written in."""
    node = entry.node
    while node is not None and not isinstance(node, ast.stmt):
        node = model.parents.get(node)
    return node


def _is_ref_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype") and isinstance(node.value, ast.Name)


def _ref_attribute(project, model, node: ast.Attribute, entry, inline: bool = False) -> str | None:
    """`ref.shape` / `ref.dtype` of a body parameter as the launch writes it (its BlockSpec's block shape, its
    scratch type's or output type's arguments, its operand's attribute), None otherwise."""
    binding = model.lookup(node.value.id, model.scope_of(node), node.lineno)
    if binding is None:
        return None
    code = ref_block_shape(project, model, binding, entry, inline) if node.attr == "shape" else None
    if code is None:
        code = ref_attribute_at_launch(project, model, binding, entry, node.attr)
    if code is None:
        code = _operand_attribute(project, model, binding, entry, node.attr)
    return code


def _unpacked_at_launch(project, model, binding, entry, depth: int) -> str | None:
    """A local unpacked from a tuple (`tile_type, barrier_type = stage_types(head_dim)`): its item of what was
    unpacked, written at the launch (`stage_types(head_dim)[0]`); None for a nested or starred unpacking."""
    statement = binding.node
    if binding.kind != "unpack" or binding.index is None or binding.value is None or not (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], (ast.Tuple, ast.List))
            and len(statement.targets[0].elts) == binding.index[1]
            and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)):
        return None
    code = _at_launch(project, model, binding.value, entry, depth + 1)
    if code is None:
        return None
    item = item_of(code, binding.index[0])
    if item is not None:  # `rows, cols = x_ref.shape` of a block `(block_rows, hidden)`: `hidden`
        return item
    parsed = ast.parse(code, mode="eval").body
    if not isinstance(parsed, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        code = f"({code})"
    return f"{code}[{binding.index[0]}]"


def _substituted(model, expression: ast.AST, replacements: list[tuple[ast.Name, str]]) -> str:
    """The source of `expression` with each name of `replacements` replaced by its code (bracketed unless it is
    an atom), the rest as written."""
    source = model.source

    def at(line: int, byte_col: int) -> tuple[int, int]:  # ast's 1-based line and UTF-8 column: (row, char)
        return line - expression.lineno, source.char_column(line - 1, byte_col)

    rows = list(source.lines[expression.lineno - 1:expression.end_lineno])
    first = source.char_column(expression.lineno - 1, expression.col_offset)
    rows[-1] = rows[-1][:source.char_column(expression.end_lineno - 1, expression.end_col_offset)]
    for name, code in sorted(replacements, key=lambda pair: (pair[0].lineno, pair[0].col_offset), reverse=True):
        parsed = ast.parse(code, mode="eval").body
        atom = isinstance(parsed, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)) or (
            isinstance(parsed, ast.Tuple) and code.startswith("(") and code.endswith(")"))
        row, start = at(name.lineno, name.col_offset)
        _, stop = at(name.end_lineno, name.end_col_offset)
        rows[row] = rows[row][:start] + (code if atom else f"({code})") + rows[row][stop:]
    rows[0] = rows[0][first:]
    return "\n".join(rows)


def ref_block_shape(project, model, binding, entry, inline: bool = False) -> str | None:
    """`ref.shape` of a `pl.pallas_call` body's ref parameter as its launch writes it: the block shape of the
    ref's `pl.BlockSpec((l, r), ...)` in in_specs/out_specs (after the grid spec's scalar prefetch refs), where
    every dimension is kept (no `None`, squeezed, element or other block-dimension object). None otherwise. A block
    shape built by a call (`cfg.block(cols)`) is that call, or with `inline` the tuple it returns (for its items)."""
    from .grid_spec import at_launch, grid_spec_site
    from .kernel_edits import CannotFix
    from .sites import bound_before, keyword_bound

    body = entry.body.node if entry.body is not None else None
    if (binding.kind != "param" or entry.api != "pl.pallas_call" or not isinstance(body, ast.FunctionDef)
            or body.args.posonlyargs):
        return None
    keyword = keyword_bound(entry.kernel.body)
    refs = [arg for arg in body.args.args[bound_before(entry.kernel.body):] if arg.arg not in keyword]
    index = next((n for n, arg in enumerate(refs) if arg is binding.node), None)
    if index is None:
        return None
    try:
        site = grid_spec_site(project, entry)
    except CannotFix:
        return None
    spec_model, spec = site if site is not None else (model, None)
    holder = spec if spec is not None else entry.node
    if not isinstance(holder, ast.Call) or (spec is not None and spec.args):
        return None
    given = {k.arg: k.value for k in holder.keywords if k.arg}
    prefetch = given.get("num_scalar_prefetch")
    index -= prefetch.value if isinstance(prefetch, ast.Constant) and type(prefetch.value) is int else 0
    if index < 0 or (prefetch is not None and not isinstance(prefetch, ast.Constant)):
        return None
    block = _spec_of_ref(spec_model, holder, given, index, len(refs))
    if isinstance(block, ast.Name):
        block = _block_spec_named(spec_model, block, holder)
    if not (isinstance(block, ast.Call) and block.args and isinstance(block.args[0], (ast.Tuple, ast.Call))):
        return None
    constructor = project.evaluator.value(spec_model, block.func)
    if not (isinstance(constructor, Api) and constructor.name == "pl.BlockSpec"):
        return None
    if isinstance(block.args[0], ast.Call):  # `pl.BlockSpec(cfg.block(cols), ...)`: see built_block_shape
        if spec_model is not entry.model or not is_block_shape(project, spec_model, block.args[0]):
            return None
        return inlined_shape(project, spec_model, block.args[0]) if inline else \
            ast.get_source_segment(spec_model.text, block.args[0])
    if any(not isinstance(d, (ast.Name, ast.Constant, ast.BinOp, ast.Attribute, ast.Subscript)) or
           (isinstance(d, ast.Constant) and type(d.value) is not int) for d in block.args[0].elts):
        return None
    if spec_model is not entry.model:  # a factory of another module writes it in its own terms
        return at_launch(project, spec_model, spec, block.args[0], entry)
    return ast.get_source_segment(model.text, block.args[0])


def _spec_of_ref(model, holder: ast.Call, given: dict, index: int, refs: int) -> ast.AST | None:
    """The spec of the `index`-th of a body's `refs` refs (scalar prefetch refs left out): counted from the start
    through in_specs, then out_specs; an output's also counted from the end, past the scratch refs, where in_specs
    is built by a call (`in_specs=_block_specs(cfg)`) whose length is not written."""
    from .spec_lists import spec_elements

    inputs = spec_elements(model, holder, given.get("in_specs"))
    outputs = spec_elements(model, holder, given.get("out_specs"))
    if not _opaque(model, holder, given.get("in_specs"), inputs):
        specs = [*inputs, *outputs]
        return specs[index] if index < len(specs) else None
    scratch = given.get("scratch_shapes")
    scratch_count = 0 if scratch is None else len(spec_elements(model, holder, scratch))
    if _opaque(model, holder, given.get("out_specs"), outputs) or (
            scratch is not None and not isinstance(scratch, (ast.List, ast.Tuple)) and scratch_count == 1):
        return None  # the outputs, or the scratch list built elsewhere: how many refs they make is not known
    first_output = refs - scratch_count - len(outputs)
    return outputs[index - first_output] if first_output <= index < refs - scratch_count else None


def _opaque(model, holder: ast.Call, written: ast.AST | None, specs: list[ast.AST]) -> bool:
    """`written` (in_specs / out_specs) is a list of unknown length: not a display nor a name holding one
    (`specs`, its elements, is `[written]` itself), and no BlockSpec written or named, but a call that builds the
    list (`_block_specs(cfg)`), a comprehension or a name of such."""
    if written is None or specs != [written]:
        return False
    element = _block_spec_named(model, written, holder) if isinstance(written, ast.Name) else written
    func = element.func if isinstance(element, ast.Call) else None
    return not (isinstance(func, ast.Attribute) and func.attr == "BlockSpec"
                or isinstance(func, ast.Name) and func.id == "BlockSpec")


def _block_spec_named(model, name: ast.Name, launch: ast.Call) -> ast.AST | None:
    """What a BlockSpec named in in_specs/out_specs holds (`row_block = pl.BlockSpec((cfg.block_rows, hidden), ...)`,
    `in_specs=[row_block, ...]`): the value of its one assignment in the launch's own function, where every name
    of its block shape means at the launch what it meant there. None otherwise."""
    scope = model.scope_of(launch)
    binding = model.lookup(name.id, scope, launch.lineno)
    if (binding is None or binding.kind != "assign" or not isinstance(binding.value, ast.Call) or not binding.value.args
            or model.scope_of(binding.node) is not scope or len(model.scopes[scope].bindings.get(name.id, [])) != 1):
        return None
    for inner in ast.walk(binding.value.args[0]):  # the block shape, the one part written at the launch
        if isinstance(inner, ast.Name) and model.lookup(inner.id, model.scope_of(inner), inner.lineno) is not \
                model.lookup(inner.id, scope, launch.lineno):
            return None
    return binding.value


def _operand_attribute(project, model, binding, entry, attr: str) -> str | None:
    """`x_gmem.shape` / `.dtype` of a `plgpu.kernel` body's input ref, which is the whole operand (no block
    specs): the same attribute of the operand the launch passes for it, where that is a plain name
    (`plgpu.kernel(body, ...)(x, y)`: `x.shape`). None otherwise."""
    from .sites import bound_before, keyword_bound

    body = entry.body.node if entry.body is not None else None
    call = model.parents.get(entry.node)
    if (binding.kind != "param" or entry.api != "plgpu.kernel" or not isinstance(body, ast.FunctionDef)
            or body.args.posonlyargs or not (isinstance(call, ast.Call) and call.func is entry.node)
            or call.keywords or any(isinstance(a, ast.Starred) for a in call.args)):
        return None
    keyword = keyword_bound(entry.kernel.body)
    refs = [arg for arg in body.args.args[bound_before(entry.kernel.body):] if arg.arg not in keyword]
    index = next((n for n, arg in enumerate(refs) if arg is binding.node), None)
    if index is None or index >= len(call.args) or not isinstance(call.args[index], ast.Name):
        return None
    return f"{call.args[index].id}.{attr}"


def _passed_by_one_call(project, model, binding, entry, depth: int) -> str | None:
    """A helper's parameter, where the helper is named once in the workspace, by a call in this module
    (`_epilogue(x_smem, o_smem, tiles, beta)` in a pipeline step): what that call passes, as the launch writes it;
    only names, attributes and arithmetic of them, which mean the same written again."""
    parameter = binding.node
    function = model.parents.get(model.parents.get(parameter))
    if not (isinstance(parameter, ast.arg) and isinstance(function, ast.FunctionDef)) \
            or project.importers_mentioning(model, function.name):
        return None
    mentions = [n for n in ast.walk(model.tree) if (isinstance(n, ast.Name) and n.id == function.name)
                or (isinstance(n, ast.Attribute) and n.attr == function.name)]
    call = model.parents.get(mentions[0]) if len(mentions) == 1 else None
    if not (isinstance(call, ast.Call) and call.func is mentions[0]) or any(
            isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    callee = project.evaluator.value(model, call.func)
    if not (isinstance(callee, Func) and callee.node is function and callee.self_value is None):
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    index = next((i for i, arg in enumerate(positional) if arg is parameter), None)
    given = {k.arg: k.value for k in call.keywords}.get(parameter.arg)
    if given is None and index is not None and index < len(call.args):
        given = call.args[index]
    if given is None or any(isinstance(n, ast.Call) for n in ast.walk(given)):
        return None  # a call (`Config(rows=...)`, `plgpu.SMEM(...)`), which written again would run again
    return _at_launch(project, model, given, entry, depth + 1)


def _bound_at_launch(project, model, binding, entry) -> str | None:
    """What the launch binds the body's parameter `binding` to: the instance of a bound method launched as
    `<instance>.<method>`, or an argument of the `functools.partial` the launch wraps the body in."""
    from .sites import forwarded_refs_call, named_refs_call

    parameter = binding.node
    body = entry.body.node if entry.body is not None else None
    forwarded = forwarded_refs_call(body)
    named = named_refs_call(body) if forwarded is None else None
    if named is not None:  # `lambda x_ref, o_ref: F(x_ref, o_ref, width=...)`: F's keywords are the lambda's
        given = next((k.value for k in named.keywords if k.arg == getattr(parameter, "arg", None)), None)
        return ast.get_source_segment(model.text, given) if given is not None else None
    if forwarded is not None:  # `lambda *refs: F(plan, *refs)`: F's parameters before the refs are the lambda's
        function = model.parents.get(model.parents.get(parameter))
        positional = [*function.args.posonlyargs, *function.args.args] if isinstance(function, ast.FunctionDef) else []
        index = next((i for i, arg in enumerate(positional) if arg is parameter), None)
        keywords = {k.arg: k.value for k in forwarded.keywords}
        given = keywords.get(parameter.arg) if isinstance(parameter, ast.arg) else None
        if given is None and index is not None and index < len(forwarded.args) - 1:
            given = forwarded.args[index]
        return ast.get_source_segment(model.text, given) if given is not None else None
    if not isinstance(parameter, ast.arg) or body is None or not isinstance(body, ast.FunctionDef):
        return None
    built = _factory_argument(project, model, parameter, body, entry)
    if built is not None:
        return built
    path = ""  # the helper's instance as an attribute path from the body's (`self.sync`'s `.sync`)
    if not any(parameter is arg for arg in (*body.args.posonlyargs, *body.args.args, *body.args.kwonlyargs)):
        instance = _module_instance(project, model, parameter, entry)
        if instance is not None:
            return instance
        path = _instance_path(project, model, parameter, body)
        if path is None:
            return None
        parameter = [*body.args.posonlyargs, *body.args.args][0]  # a helper method's `self` is the body's
    launch_model = entry.model  # the launch's arguments are written there (the body's module, or an `ops` module)
    launched = _launched_body(project, launch_model, entry)
    if launched is None:
        return None
    positional = [*body.args.posonlyargs, *body.args.args]
    bound: list[ast.AST] = []
    keywords: dict[str, ast.AST] = {}
    node = launched
    while isinstance(node, ast.Call) and _is_partial(project, launch_model, node) and node.args:
        bound[:0] = node.args[1:]  # an outer partial's arguments come after an inner one's
        keywords = {k.arg: k.value for k in node.keywords if k.arg} | keywords
        node = node.args[0]
    value = entry.kernel.body
    while isinstance(value, Partial):
        value = value.func
    if isinstance(value, Func) and value.self_value is not None:
        if not isinstance(node, ast.Attribute):
            return None
        bound.insert(0, node.value)  # `self._body`: the instance is the method's first parameter
    elif isinstance(value, Instance) and entry.body is not None and entry.body.self_value is value:
        bound.insert(0, node)  # `self.kernel_body`, a callable object: it is its `__call__`'s first parameter
    if parameter.arg in keywords:
        code = ast.get_source_segment(launch_model.text, keywords[parameter.arg])
    else:
        index = next((i for i, arg in enumerate(positional) if arg is parameter), None)
        if index is None or index >= len(bound) or isinstance(bound[index], ast.Starred):
            return None
        code = ast.get_source_segment(launch_model.text, bound[index])
    if path and code is not None and not isinstance(ast.parse(code, mode="eval").body, (ast.Name, ast.Attribute)):
        code = f"({code})"
    return None if code is None else code + path


def _factory_argument(project, model, parameter: ast.arg, body: ast.FunctionDef, entry) -> str | None:
    """A parameter of the factory the body is nested in, where the launch builds the body by calling it
    (`plgpu.kernel(_make_body(cfg), ...)`, `def _make_body(cfg): def body(...): ...; return body`): the argument
    that call passes for it."""
    factory = model.parents.get(model.parents.get(parameter))
    if not isinstance(factory, ast.FunctionDef) or factory is body or factory.args.vararg or factory.args.kwarg:
        return None
    outer = model.enclosing_function(body)
    while outer is not None and outer is not factory:
        outer = model.enclosing_function(outer)
    launched = _launched_body(project, model, entry)
    if outer is None or not isinstance(launched, ast.Call) or any(isinstance(a, ast.Starred) for a in launched.args) \
            or any(k.arg is None for k in launched.keywords):
        return None
    callee = project.evaluator.value(model, launched.func)
    if not (isinstance(callee, Func) and callee.node is factory):
        return None
    keywords = {k.arg: k.value for k in launched.keywords}
    positional = [*factory.args.posonlyargs, *factory.args.args]
    passed = list(launched.args)
    if callee.self_value is not None:  # `self._make_body()`: the factory method's instance is the receiver
        if not isinstance(launched.func, ast.Attribute):
            return None
        passed.insert(0, launched.func.value)
    index = next((i for i, arg in enumerate(positional) if arg is parameter), None)
    given = keywords.get(parameter.arg)
    if given is None and index is not None and index < len(passed):
        given = passed[index]
    if not _plain(given):
        return None  # a call or other computation, which written again would run again
    return ast.get_source_segment(model.text, given)


def _plain(node: ast.AST | None) -> bool:
    """A name, an attribute path of one or a constant: written once more at the launch, it means the same."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def _module_instance(project, model, parameter: ast.arg, entry) -> str | None:
    """The module-level name of the instance every call of a helper method reaches it through
    (`SYNC.acquire()`, `SYNC = ArrivalSync()`), where the launch sees that name too; None otherwise."""
    function = model.parents.get(model.parents.get(parameter))
    if not (isinstance(function, ast.FunctionDef) and model.enclosing_class(function) is not None
            and [*function.args.posonlyargs, *function.args.args][:1] == [parameter] and not function.decorator_list):
        return None
    names = set()
    for _, call, _, _, _ in project.evaluator.call_sites_with_nodes(model, function):
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not isinstance(receiver, ast.Name):
            return None
        binding = model.lookup(receiver.id, model.scope_of(receiver), receiver.lineno)
        if binding is None or binding is not model.module_binding(receiver.id) or binding.kind != "assign" \
                or model.lookup(receiver.id, model.scope_of(entry.node), entry.node.lineno) is not binding:
            return None
        names.add(receiver.id)
    return names.pop() if len(names) == 1 else None


def _instance_path(project, model, parameter: ast.arg, body: ast.FunctionDef) -> str | None:
    """Where `parameter`, the instance (first parameter) of a helper method, is reached from the instance the body
    method is bound to: "" for a method of the body's own class every call reaches through the instance of a
    method of that class (`self.ready_barrier()` in `self.body`), `.sync` for a method of another class every
    call reaches through one attribute of it (`self.sync.acquire()`); None otherwise."""
    from ..analysis.call_graph import method_calls, mixed_into

    arguments = model.parents.get(parameter)
    function = model.parents.get(arguments)
    owner = model.enclosing_class(body)
    if not (isinstance(function, ast.FunctionDef) and owner is not None
            and model.enclosing_class(function) is not None
            and [*function.args.posonlyargs, *function.args.args][:1] == [parameter]
            and [*body.args.posonlyargs, *body.args.args] and not function.decorator_list):
        return None
    own = model.enclosing_class(function) is owner or mixed_into(project, model, model.enclosing_class(function), owner)
    calls = [call for _, call, _, _, _ in project.evaluator.call_sites_with_nodes(model, function)] or method_calls(
        project, model, function)
    paths = set()
    for call in calls:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        path = ""
        if not own and isinstance(receiver, ast.Attribute):
            receiver, path = receiver.value, f".{receiver.attr}"
        if not isinstance(receiver, ast.Name) or (own and path) or (not own and not path):
            return None
        binding = model.lookup(receiver.id, model.scope_of(receiver), receiver.lineno)
        caller = model.parents.get(model.parents.get(binding.node)) if binding is not None else None
        if not (binding is not None and binding.kind == "param" and isinstance(caller, ast.FunctionDef)
                and model.enclosing_class(caller) is owner
                and [*caller.args.posonlyargs, *caller.args.args][:1] == [binding.node]):
            return None
        paths.add(path)
    return paths.pop() if len(paths) == 1 else None


def _launched_body(project, model, entry) -> ast.AST | None:
    """The body as the launch writes it (`self._body`, `functools.partial(_body, cfg=cfg)`), following a name
    assigned once in the launch's own function."""
    if not (isinstance(entry.node, ast.Call) and entry.node.args and entry.kernel.node is entry.node):
        return None
    node = entry.node.args[0]
    if isinstance(node, ast.Name):
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        scope = model.scope_of(entry.node)
        if (binding is None or binding.kind != "assign" or binding.value is None
                or model.scope_of(binding.node) is not scope or len(model.scopes[scope].bindings.get(node.id, [])) != 1):
            return None
        node = binding.value
    return node


def _is_partial(project, model, call: ast.Call) -> bool:
    func = project.evaluator.value(model, call.func)
    return isinstance(func, Api) and func.name == "functools.partial"


# Global array types whose first two arguments are the shape and the dtype.
_ARRAY_TYPES = ("plgpu.GMEM", "pl.ANY", "pltpu.ANY", "pltpu.HBM", "jax.ShapeDtypeStruct")


def array_at_launch(project, model, argument: ast.AST, entry) -> tuple[str, str] | None:
    """(shape, dtype) code of the global array `argument` asks for, as `entry`'s launch writes it: the
    constructor's own arguments carried there (`plgpu.GMEM((cfg.rows, 128), cfg.dtype)`), else the carried type's
    `.shape` and `.dtype` (`self.cfg.residual.shape`). None where a name has no counterpart at the launch."""
    if isinstance(argument, ast.Call) and not any(isinstance(a, ast.Starred) for a in argument.args):
        func = project.evaluator.value(model, argument.func)
        given = dict(zip(("shape", "dtype"), argument.args)) | {k.arg: k.value for k in argument.keywords if k.arg}
        if isinstance(func, Api) and func.name in _ARRAY_TYPES and "shape" in given and "dtype" in given:
            shape, dtype = (_at_launch(project, model, given[key], entry, 0) for key in ("shape", "dtype"))
            return (shape, dtype) if shape is not None and dtype is not None else None
    whole = _at_launch(project, model, argument, entry, 0)
    if whole is None:
        return None
    if not isinstance(ast.parse(whole, mode="eval").body, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        whole = f"({whole})"
    return f"{whole}.shape", f"{whole}.dtype"
