"""Fix (PAL001): a block-local buffer (SMEM, TMEM, a barrier) asked of `pl.get_global` in a compiled
`pl.kernel` (or in a helper that compiled `plgpu.kernel` bodies call) is allocated with `pl.run_scoped` for the
rest of the function instead.

    def body(x_ref, o_ref):                 def body(x_ref, o_ref):
        tmp = pl.get_global(plgpu.SMEM(...))    def scoped(tmp):
        tmp[...] = x_ref[...]           ->          tmp[...] = x_ref[...]
        o_ref[...] = tmp[...]                       o_ref[...] = tmp[...]
                                                pl.run_scoped(scoped, plgpu.SMEM(...))

A compiled `pl.kernel` (Mosaic GPU's mpmd_map lowering) takes no scratch operands, so the scratch fix
of `plgpu.kernel` does not apply; `run_scoped` allocates the same buffer, per block, for as long as
the statements after the get_global run, which is every use the buffer can have there. The type stays
as written (it is evaluated where it was). In a kernel with warpgroup threads the allocation is
collective over the thread axis (`collective_axes=`), as JAX requires there ("Only thread-collective
allocations are supported in multithreaded kernels") and as scratch is: one buffer per block.

A TPU `pltpu.VMEM` becomes `plgpu.SMEM` of its shape and dtype (unsafe: another memory).

Only where the get_global is `name = ...` in a function's body, or in a block of it (a Python `for` or
`while` body, an `if` branch, a `with` block: the rest of that block is scoped, so a loop the trace unrolls
allocates once per iteration, as each get_global did), and the statements after it neither return, nor
`break` or `continue` a loop around them, nor bind a name that is read before them (they move into the
nested function).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import MOSAIC_GPU, UNKNOWN_BACKEND, _launch_settings, compiled_backend
from ..analysis.values import Api, Const, MemType
from .allocate_as_scratch import TPU_VMEM_AS_SMEM, as_smem, spelled_type
from .kernel_edits import CannotFix, FixBuilder, replace_expression, unique_name
from .traced_once import CONTAINER_METHODS
from .sites import locate
from .vmapped_launch import relaunch_if_vmapped

_BLOCK_LOCAL = {"smem", "tmem", "regs"}
_EXITS = (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await)


def _thread_axis(project, entry) -> str | None:
    """The launch's thread axis name ('' without threads); None where not known."""
    get = _launch_settings(project, entry)
    if get is None:
        return None
    threads, name = get("num_threads"), get("thread_name")
    if threads is None and name is None:
        return ""
    if isinstance(threads, Const) and threads.value in (None, 1) and name is None:
        return ""
    if isinstance(name, Const) and isinstance(name.value, str):
        return name.value
    return None


def _own_nodes(statements: list[ast.stmt]):
    """Every node of `statements`, not descending into nested functions, lambdas or classes."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # a nested function among the statements: its name is bound here, its body is its own
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)
            elif not isinstance(child, ast.Lambda):
                yield child  # its name is bound here


def _ends_in_return(rest: list[ast.stmt]) -> bool:
    """`rest` ends with a `return` of its own block: the nested function returns that value, and
    `return pl.run_scoped(...)` returns it on (run_scoped returns what its function returns)."""
    return bool(rest) and isinstance(rest[-1], ast.Return)


def _return_stays_out(rest: list[ast.stmt], name: str) -> bool:
    """`rest` ends in `return <expr>` after other statements, where `<expr>` reads neither the buffer nor a name
    `rest` binds (`return self.dst`): returned after the scope it means the same, and a ref it may be (which
    run_scoped cannot hand back) stays out of the scope."""
    if len(rest) < 2 or not isinstance(rest[-1], ast.Return) or not _path(rest[-1].value):
        return False  # a computed value (`return carry + 1.0`) run_scoped hands back as it is
    read = {n.id for n in ast.walk(rest[-1].value) if isinstance(n, ast.Name)}
    bound = {n.id for s in rest[:-1] for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    bound |= {n.name for s in rest[:-1] for n in ast.walk(s) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    calls = any(isinstance(n, (ast.Call, ast.Await, ast.NamedExpr)) for n in ast.walk(rest[-1].value))
    return not calls and name not in read and not read & bound


def _path(node: ast.AST | None) -> bool:
    """A name or an attribute path of one (`self.dst`): what may be a ref."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _check_movable(function: ast.FunctionDef, rest: list[ast.stmt]) -> None:
    """CannotFix unless `rest` (the statements after the get_global) can become a nested function's body."""
    moved = {id(n) for s in rest for n in ast.walk(s)}
    bound = set()
    final_return = rest[-1] if _ends_in_return(rest) else None
    for node in _own_nodes(rest):
        if isinstance(node, _EXITS) and node is not final_return:
            raise CannotFix("a statement after the get_global returns, yields or declares a name global")
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    # A name bound in `rest` becomes the nested function's own: it must not be read outside `rest`, nor read in
    # `rest` where the function also binds it elsewhere (`x = x + 1` would read an unbound local). One only
    # rebound there (`_ = ...` in `for _ in ...`) is harmless.
    stored_outside = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in bound and id(node) not in moved:
            if isinstance(node.ctx, ast.Load):
                raise CannotFix(f"{node.id} is bound after the get_global and used before it")
            stored_outside.add(node.id)
    # A parameter rebound in `rest` (`if acc is None: acc = ...`) is read there as the nested function's unbound local.
    arguments = function.args
    stored_outside.update(bound & {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                                   *filter(None, [arguments.vararg, arguments.kwarg])]})
    read = {n.id for s in rest for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    clash = sorted(stored_outside & read)
    if clash:
        raise CannotFix(f"{clash[0]} is bound after the get_global and used before it")


_READS_OF_VALUE = {"shape", "dtype", "ndim", "size"}


def _check_not_escaping(model, call: ast.Call, holding: ast.stmt | None, name: str, rest: list[ast.stmt]) -> None:
    """CannotFix where the buffer would outlive `pl.run_scoped`: stored on an object (`self._barrier = ...`) or
    returned (JAX then fails on the dead ref: 'NoneType' object has no attribute 'physical_element_aval').
    `holding`: the statement holding the get_global where it stays, the buffer in the call's place."""
    if isinstance(holding, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
            not isinstance(t, ast.Name) for t in (holding.targets if isinstance(holding, ast.Assign) else [holding.target])):
        raise CannotFix("the buffer is stored on an object, where it would outlive pl.run_scoped")
    aliases = {name}
    if isinstance(holding, ast.Return) and _mentions_ref(model, holding.value, aliases, call):
        raise CannotFix("the buffer is returned, and would outlive pl.run_scoped")
    # Nested functions too (a pipeline step storing the buffer on an object lets it outlive the scope as well).
    for node in (n for statement in rest for n in ast.walk(statement)):
        if isinstance(node, ast.Assign) and _mentions_ref(model, node.value, aliases, call):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases.add(target.id)
                else:  # `self._tile = tile`, `tiles[i] = tile`
                    raise CannotFix("the buffer is stored on an object, where it would outlive pl.run_scoped")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CONTAINER_METHODS
                and any(_mentions_ref(model, a, aliases, call) for a in node.args)):
            raise CannotFix(f"the buffer is put in a container ({node.func.attr}), where it would outlive pl.run_scoped")
    if _ends_in_return(rest) and rest[-1].value is not None and _mentions_ref(model, rest[-1].value, aliases):
        raise CannotFix("the buffer is returned, and would outlive pl.run_scoped")


def _check_not_read_after(function: ast.AST, statement: ast.stmt, name: str, rest: list[ast.stmt]) -> None:
    """CannotFix where `name` is read after the block that `rest` ends (`if acc is None: acc = get_global(T)`,
    then `acc[...]` below the `if`): only `rest` moves into the nested function, so that read would see the name
    as it was before the get_global (None, or unbound), not the buffer."""
    moved = {id(n) for s in rest for n in ast.walk(s)}
    names = {name} | {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    end = (statement.end_lineno, statement.end_col_offset)
    for node in ast.walk(function):
        if (isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) and id(node) not in moved
                and (node.lineno, node.col_offset) > end):
            raise CannotFix(f"{node.id} is read after the block holding the get_global, where pl.run_scoped's "
                            "buffer would not reach")


def _mentions_ref(model, expression: ast.expr, names: set[str], call: ast.Call | None = None) -> bool:
    """`expression` holds one of `names` (or the get_global `call`) as the ref itself, not a value read from it
    (`ref[...]`, `ref.shape`)."""
    for node in ast.walk(expression):
        if (isinstance(node, ast.Name) and node.id in names) or node is call:
            parent = model.parents.get(node)
            if isinstance(parent, ast.Subscript) and parent.value is node:
                continue
            if isinstance(parent, ast.Attribute) and parent.attr in _READS_OF_VALUE:
                continue
            if _array_function_argument(model, node, parent):
                continue
            return True
    return False


# Modules whose functions take a ref as an array (`jnp.zeros_like(acc)`, `lax.square(acc)`) and return a new value.
_ARRAY_MODULES = ("jnp.", "lax.", "np.")


def _array_function_argument(model, node: ast.expr, parent: ast.AST | None) -> bool:
    """`node` is an argument of a jax.numpy / lax / numpy function, which reads the ref as an array and returns
    a new value (`acc[...] = jnp.zeros_like(acc)`): what it returns does not hold the ref."""
    if not (isinstance(parent, ast.Call) and any(a is node for a in parent.args)):
        return False
    project = model.owner  # the project whose model it is
    callee = project.evaluator.value(model, parent.func) if project is not None else None
    return isinstance(callee, Api) and callee.name.startswith(_ARRAY_MODULES)


_BLOCKS = {ast.For: "loop body", ast.While: "loop body", ast.If: "branch", ast.With: "with block"}


def _block_of(model, statement: ast.stmt, function: ast.FunctionDef) -> tuple[list[ast.stmt], str | None]:
    """The statement list holding `statement` in `function` and what it is (None: the function's own body);
    CannotFix where a block other than a loop body, a branch or a with block holds it (try, match, else of a
    loop)."""
    if statement in function.body:
        return function.body, None
    parent = model.parents.get(statement)
    kind = _BLOCKS.get(type(parent))
    if kind is None or model.enclosing_function(statement) is not function:
        raise CannotFix("the get_global is not directly in its function's body (a loop, a branch)")
    if statement in parent.body:
        return parent.body, kind
    if isinstance(parent, ast.If) and statement in parent.orelse:
        return parent.orelse, kind
    raise CannotFix("the get_global is in a loop's else block")


def _in_if(model, statement: ast.stmt, function: ast.AST) -> bool:
    node = model.parents.get(statement)
    while node is not None and node is not function:
        if isinstance(node, ast.If):
            return True
        node = model.parents.get(node)
    return False


def _in_loop(model, statement: ast.stmt, function: ast.FunctionDef) -> bool:
    node = model.parents.get(statement)
    while node is not None and node is not function:
        if isinstance(node, (ast.For, ast.While)):
            return True
        node = model.parents.get(node)
    return False


def _returned_by_helper(project, model, call: ast.Call, helper: ast.FunctionDef):
    """`(name = helper(), name, caller)` where `helper` only returns the get_global (`def get(what=T): return
    pl.get_global(what)`) and is called once, with no arguments, as `name = helper()` in a function of this
    module that binds `name` there only, with no other mention of it here or in an importer: the call is the
    get_global written another way, and its buffer must outlive the helper, so it is allocated there."""
    body = helper.body[1:] if (helper.body and isinstance(helper.body[0], ast.Expr)
                               and isinstance(helper.body[0].value, ast.Constant)) else helper.body
    args = helper.args
    if (len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is not call or helper.decorator_list
            or args.posonlyargs or args.vararg or args.kwarg or len(args.defaults) != len(args.args)
            or any(d is None for d in args.kw_defaults)):
        return None
    mentions = [n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == helper.name]
    if len(mentions) != 1 or not isinstance(mentions[0].ctx, ast.Load) or project.importers_mentioning(model, helper.name):
        return None
    called = model.parents.get(mentions[0])
    if not (isinstance(called, ast.Call) and called.func is mentions[0] and not called.args and not called.keywords):
        return None
    statement = model.parents.get(called)
    caller = model.enclosing_function(statement) if statement is not None else None
    if (not isinstance(statement, ast.Assign) or statement.value is not called or len(statement.targets) != 1
            or not isinstance(statement.targets[0], ast.Name) or not isinstance(caller, ast.FunctionDef)):
        return None
    name = statement.targets[0].id
    if len(model.scopes[caller].bindings.get(name, [])) != 1:
        return None
    return statement, name, caller


def _remove_function(model, file, function: ast.FunctionDef) -> None:
    """Drop a function that nothing calls any more (the helper whose one call the fix replaced); comments
    above it stay."""
    if isinstance(model.parents.get(function), ast.Module):
        file.remove_top_level(function)  # with the blank lines after it
        return
    node = file.function(function)
    block = file.parent(node) if node is not None else None
    if not isinstance(block, (cst.Module, cst.IndentedBlock)) or node not in block.body:
        raise CannotFix(f"{function.name} was not found")
    position = list(block.body).index(node)

    def drop(updated):
        body = list(updated.body)
        removed = body.pop(position)
        comments = [line for line in removed.leading_lines if line.comment is not None]
        if position < len(body) and comments:
            body[position] = body[position].with_changes(leading_lines=[*comments, *body[position].leading_lines])
        if not body and not isinstance(updated, cst.Module):  # a module's chunk may just go
            body = [cst.SimpleStatementLine([cst.Pass()])]
        return updated.with_changes(body=body)

    file.rewrite(block, drop)


def _holding_statement(model, call: ast.Call, function: ast.FunctionDef) -> ast.stmt:
    """The statement of `function`'s own body that holds the get_global, where it runs once per trace: in no
    loop, and in no comprehension but one over `range(1)` (which asks for one buffer)."""
    node, parent = call, model.parents.get(call)
    while parent is not None and parent is not function:
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
            raise CannotFix("the get_global is in a loop")
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and node is not (
                parent.generators[0].iter if parent.generators else None):
            if not (len(parent.generators) == 1 and _is_range_one(parent.generators[0].iter)):
                raise CannotFix("the get_global is in a comprehension that may ask for several buffers")
        node, parent = parent, model.parents.get(parent)
    if parent is None or node not in function.body:
        raise CannotFix("the get_global is not `name = pl.get_global(...)` in a function")
    return node


def _type_code(builder: FixBuilder, model, argument: ast.expr, helper, barrier: str | None, smem: MemType | None,
               value: MemType | None) -> str:
    """How the allocated type is written: as the get_global wrote it, or the one a barrier / TPU VMEM fix asks."""
    _, imports = builder.file(model)
    type_code = ast.get_source_segment(model.text, argument) or ast.unparse(argument)
    if helper is not None and barrier is None and smem is None:  # the helper's names are not the caller's
        type_code = spelled_type(builder, model, value) if value is not None else None
        if type_code is None:
            raise CannotFix(f"the type {helper.name} asks for cannot be spelled where it is called")
    if barrier is not None:
        type_code = f"{imports.name('jax.experimental.pallas.mosaic_gpu')}.{barrier}"
    if smem is not None:
        type_code = spelled_type(builder, model, as_smem(smem))
    return type_code


def _collective(axis: str) -> str:
    quoted = f"\"{axis}\"" if axis.isidentifier() else repr(axis)
    return f", collective_axes={quoted}" if axis else ""


def _passed_straight(model, call: ast.Call) -> ast.Call | None:
    """`stage(pl.get_global(T))` as a statement of its own, returned, or assigned (`acc = stage(pl.get_global(T))`,
    where `stage` is a function of this module that never returns the buffer itself): a call of a named function
    whose one argument is the buffer, so `pl.run_scoped(stage, T)` allocates it for exactly that call."""
    outer = model.parents.get(call)
    if not (isinstance(outer, ast.Call) and outer.args == [call] and not outer.keywords):
        return None
    func = outer.func
    while isinstance(func, ast.Attribute):
        func = func.value
    holder = model.parents.get(outer)
    if isinstance(holder, ast.Assign) and holder.value is outer:
        return outer if _returns_values_only(model, outer.func) else None
    if not isinstance(func, ast.Name) or not isinstance(holder, (ast.Expr, ast.Return)):
        return None
    return outer


def _returns_values_only(model, func: ast.expr) -> bool:
    """`func` names a function of this module (one def) of one parameter that no `return` hands back bare: what it
    returns outlives the run_scoped it becomes the body of, and the buffer must not."""
    if not isinstance(func, ast.Name):
        return False
    binding = model.lookup(func.id, model.scope_of(func), func.lineno)
    definition = binding.node if binding is not None and binding.kind == "def" else None
    if not isinstance(definition, ast.FunctionDef) or len(definition.args.args) != 1 or definition.args.vararg \
            or definition.args.kwonlyargs or definition.args.posonlyargs or definition.decorator_list:
        return False
    parameter = definition.args.args[0].arg
    for node in _own_nodes(definition.body):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Return) and node.value is not None and any(
                isinstance(n, ast.Name) and n.id == parameter and not isinstance(model.parents.get(n), ast.Subscript)
                for n in ast.walk(node.value)):
            return False  # `return acc_ref` (or a tuple holding it); `return acc_ref[...]` is its value
    return True


def _scoped_call(project, given: tuple, outer: ast.Call, axis: str, function: ast.FunctionDef, entries):
    """`stage(pl.get_global(T))` -> `pl.run_scoped(stage, T)`: the function that takes the buffer is the
    scoped body; what it returns, run_scoped returns."""
    model, call, code, barrier, smem, value = given
    argument = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if argument is None or isinstance(argument, ast.Starred):
        raise CannotFix("get_global has no plain argument")
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    type_code = _type_code(builder, model, argument, None, barrier, smem, value)
    callee = ast.get_source_segment(model.text, outer.func) or ast.unparse(outer.func)
    replace_expression(builder, model, outer,
                       f"{imports.name('jax.experimental.pallas')}.run_scoped({callee}, {type_code}{_collective(axis)})")
    where_ = (f", collective over {axis!r}" if axis else "") + relaunch_if_vmapped(project, builder, entries)
    return _titled(builder, code, barrier, smem, f"the buffer {callee} takes", f"its call in {function.name}{where_}")


def _titled(builder: FixBuilder, code: str, barrier: str | None, smem: MemType | None, subject: str, span: str):
    """The run_scoped fix, titled for what it allocates (`subject`) and for how long (`span`)."""
    if barrier is not None:
        return builder.fix(f"pallas-lsp ({code}): Use an SMEM barrier, plgpu.{barrier} with pl.run_scoped for {span}",
                           "unsafe")
    if smem is not None:
        return builder.fix(f"pallas-lsp ({code}): Allocate {subject} as plgpu.SMEM with pl.run_scoped for {span} "
                           f"(unsafe: {TPU_VMEM_AS_SMEM})", "unsafe")
    return builder.fix(f"pallas-lsp ({code}): Allocate {subject} with pl.run_scoped for {span}", "safe", preferred=True)


def _is_range_one(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == 1)


def fix(project, model, call, value, code: str):
    if code != "PAL001" or not isinstance(value, MemType):
        return None
    if value.constructor == "pltpu.VMEM" and value.shape is not None and value.dtype:
        return allocate(project, model, call, code, smem=value)  # TPU memory: the GPU's SMEM of its shape
    if not (value.space in _BLOCK_LOCAL or "Barrier" in value.constructor):
        return None
    return allocate(project, model, call, code, value=value)


def _scratch_refused(project, model, call, entries, value: MemType | None, code: str) -> bool:
    """Compiled plgpu.kernel launches whose scratch fix is refused (the type reads what the launch cannot write:
    `tile.shape` of a scratch list a helper builds): `pl.run_scoped` allocates the buffer where its type is
    evaluated, per block, as scratch would (Mosaic GPU allocates both for the block's lifetime)."""
    from . import allocate_as_scratch
    from .kernel_edits import CannotFix

    if value is None or not entries or any(e.api != "plgpu.kernel" for e in entries):
        return False
    try:
        allocate_as_scratch.fix(project, model, call, value, code)
    except CannotFix:
        return True
    return False


def allocate(project, model, call, code: str, barrier: str | None = None, smem: MemType | None = None,
             value: MemType | None = None):
    """The run_scoped rewrite of a compiled pl.kernel's get_global; `barrier`: a `Barrier(...)` of the
    mosaic_gpu module allocated instead of the get_global's type (PAL006's unsafe barrier fix); `smem`: a
    TPU `pltpu.VMEM` asked for, allocated as `plgpu.SMEM` of its shape and dtype (unsafe, as allocate_as_scratch
    does for a plgpu.kernel)."""
    located = locate(project, model, call, local=True)
    if located is None:
        return None
    use, where, entries = located
    # plgpu.kernel and pallas_call take scratch (allocate_as_scratch), except from a plgpu.kernel's helper: the
    # type is written with the helper's own values (`acc.shape`), which its launch may not have.
    in_helper = where is not None and where.helper is not None
    # In an `if` of a plgpu.kernel body (`if stage_f32:`, a flag the launch binds), scratch would be allocated by
    # every launch, also those whose trace never takes the branch; run_scoped allocates it where it is taken.
    branch = use.statement is not None and _in_if(model, use.statement, use.function)
    if not entries or any(e.api != "pl.kernel" and not ((in_helper or branch) and e.api == "plgpu.kernel")
                          for e in entries) and not _scratch_refused(project, model, call, entries, value, code):
        return None
    if any(compiled_backend(project, e) not in (MOSAIC_GPU, UNKNOWN_BACKEND) for e in entries):
        return None  # a TPU mesh: allocate_as_scratch gives it scratch_types
    if any(e.interpret or e.maybe_interpret for e in entries):
        return None  # interpreted: allocate_as_scratch gives it scratch_types
    axes = {_thread_axis(project, e) for e in entries}
    if len(axes) != 1 or None in axes:
        raise CannotFix("the kernel's thread axis is not known, so run_scoped's collective_axes is not")
    axis = axes.pop()
    if axis and where is not None and where.moved:
        # Thread-collective, run_scoped syncs every warpgroup (jax 0.12's lowering: `gpu.barrier()`), and a closure
        # beside the body (a warp-specialized pipeline's step) may run in some of them only: it would wait forever.
        raise CannotFix("the get_global runs in a closure only some warpgroups may run (a pipeline step), where "
                        "a thread-collective pl.run_scoped waits for all of them")
    if axis and where is not None and where.reached:
        raise CannotFix("the get_global runs in a function the kernel reaches through calls, which some warpgroups "
                        "only may run, where a thread-collective pl.run_scoped waits for all of them")
    statement = use.statement
    function = use.function
    if not isinstance(function, ast.FunctionDef):
        raise CannotFix("the get_global is not `name = pl.get_global(...)` in a function")
    name = use.name
    helper = None  # the helper that returns the get_global, when its one call is the allocation
    if statement is None or name is None:
        returned = _returned_by_helper(project, model, call, function)
        if returned is not None:
            helper, (statement, name, function) = function, returned
    if statement is None or name is None:
        straight = _passed_straight(model, call)
        if straight is not None:
            return _scoped_call(project, (model, call, code, barrier, smem, value), straight, axis,
                                function, entries)
        # `sems = [pl.get_global(T) for _ in range(1)]`: that statement moves too, the buffer in the call's place
        statement = _holding_statement(model, call, function)
        if not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)):
            raise CannotFix("the get_global is in a compound statement (an `if`, a `with`) that does not name it")
        name = unique_name(model, function, "barrier_ref" if barrier is not None else "scratch_ref")
        removed = []
        rest = function.body[function.body.index(statement):]
        block, kind = function.body, None
    else:
        block, kind = _block_of(model, statement, function)
        removed = [statement] if use.lambda_statement is None else [use.lambda_statement, statement]
        if any(s not in block for s in removed):
            raise CannotFix("the lambda is not in the same block as its call")
        rest = block[block.index(statement) + 1:]
    _check_movable(function, rest)
    _check_not_escaping(model, call, statement if not removed else None, name, rest)
    _check_not_read_after(function, statement, name, rest)
    if kind is not None and _in_loop(model, statement, function) and any(
            isinstance(n, (ast.Break, ast.Continue)) for n in _own_nodes(rest)):
        raise CannotFix("a statement after the get_global breaks or continues a loop")
    argument = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
    if argument is None or call.keywords or len(call.args) != 1:
        raise CannotFix("get_global has no plain argument")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    lines = [file.parent(file.find_ast(model, s, cst.BaseSmallStatement)) for s in removed or [statement]]
    if not all(isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 for line in lines):
        raise CannotFix("the get_global statement was not found")
    block_owner = file.parent(lines[-1])  # the indented block the get_global's line is in
    if not isinstance(block_owner, cst.IndentedBlock) or any(line not in block_owner.body for line in lines):
        raise CannotFix("the get_global statement was not found")
    positions = [list(block_owner.body).index(line) for line in lines]
    position = positions[-1]
    if not removed:  # the statement stays, moved with the rest, and the buffer takes the call's place
        replace_expression(builder, model, call, name)
    scoped = unique_name(model, function, "scoped")
    pallas = imports.name("jax.experimental.pallas")
    type_code = _type_code(builder, model, argument, helper, barrier, smem, value)
    collective = _collective(axis)
    stays_out = _return_stays_out(rest, name)
    returns = "return " if _ends_in_return(rest) and not stays_out else ""
    launch = cst.parse_statement(f"{returns}{pallas}.run_scoped({scoped}, {type_code}{collective})\n")
    after = []

    def change(updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = list(updated.body)
        got = body[position]
        if stays_out:  # `return self.dst`: returned after the scope, as it was (a ref run_scoped cannot return)
            after[:] = [body[-1]]
            body = body[:-1]
        if not removed:
            moved, kept = [got.with_changes(leading_lines=[]), *body[position + 1:]], body[:position]
            inner = cst.FunctionDef(name=cst.Name(scoped), params=cst.Parameters([cst.Param(cst.Name(name))]),
                                    body=cst.IndentedBlock(body=moved), leading_lines=got.leading_lines)
            return updated.with_changes(body=[*kept, inner, launch, *after])
        moved = body[position + 1:] or [cst.SimpleStatementLine([cst.Pass()])]
        kept = [line for n, line in enumerate(body[:position]) if n not in positions]
        inner = cst.FunctionDef(
            name=cst.Name(scoped), params=cst.Parameters([cst.Param(cst.Name(name))]),
            body=cst.IndentedBlock(body=moved), leading_lines=got.leading_lines)
        comment = got.trailing_whitespace.comment
        if comment is not None:  # the get_global line's own comment stays, above the nested function
            inner = inner.with_changes(leading_lines=[*got.leading_lines, cst.EmptyLine(comment=comment)])
        return updated.with_changes(body=[*kept, inner, launch, *after])

    file.rewrite(block_owner, change)
    if helper is not None:
        _remove_function(model, file, helper)
    where_ = (f", collective over {axis!r}" if axis else "") + relaunch_if_vmapped(project, builder, entries)
    scope = function.name if kind is None else f"its {kind} in {function.name}"
    if helper is not None:  # the helper's one call gives way to the allocation, and the helper goes
        scope += f", in place of {helper.name}(), which is removed"
    return _titled(builder, code, barrier, smem, name, f"the rest of {scope}{where_}")
