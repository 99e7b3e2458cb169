"""Fix: allocate a block-local buffer (SMEM, TMEM, barrier, accumulator) as kernel scratch.

The `get_global` argument is already the scratch type, so it moves as written to the end of
`scratch_shapes` (`pallas_call`) or `scratch_types` (`plgpu.kernel`; a dict form gets a keyword),
and the body gets the matching last (or keyword-only) parameter. Also offered for a REGULAR
semaphore in an interpreted kernel: interpret mode runs blocks one after another, so a per-block
semaphore works there, but with more than one block it is no longer shared by the whole grid,
hence unsafe.
"""

from __future__ import annotations

import ast
from dataclasses import replace

import libcst as cst

from ..analysis.gpu_interpreter import gpu_interpreted
from ..analysis.kernel_model import (
    MOSAIC_GPU_SCRATCH_REFUSAL,
    SCRATCH_KEYWORDS,
    TPU_TC,
    TRITON,
    compiled_backend,
    site_interpreter,
    uses_of,
)
from ..analysis.values import Const, MemType, Seq
from .kernel_edits import (
    CannotFix,
    FixBuilder,
    add_parameter,
    append_to_unpacking,
    bodies_name,
    call_with_keyword,
    check_parameters,
    edit_sequence_argument,
    edit_sequence_keyword,
    front_indexed_vararg,
    give_to_siblings,
    remove_get_global,
    replace_expression,
    split_vararg,
    stored_as,
    tail_unpacking,
    take_name,
    thread_through_helper,
    vararg_split_point,
)
from .grid_spec import code_in_spec, grid_spec_site, scratch_argument
from .grid_spec_home import HomeSpecCode, written_for_home_spec
from .launch_helper import pass_through_named_lambdas, scratch_through_helper
from .pass_as_input import tuple_code
from .type_in_scope import depends_on_a_variable, launch_statement, type_at_launches
from .sites import constructed_class, forwards_refs, grid_rank, helper_launch, keyword_bound, locate
from .use_global_semaphore import SIGNALLED_TYPES, result_only_signalled, uses_only_signalled

_LAUNCHES = ("pl.pallas_call", "plgpu.kernel", "pl.kernel")  # the launches whose bodies this fix rewrites
_BLOCK_LOCAL = {"smem", "tmem", "regs"}


# A fix's unsafe note where it allocates a TPU VMEM buffer as the GPU's SMEM (`as_smem`).
TPU_VMEM_AS_SMEM = "VMEM is TPU memory; this is the GPU's shared memory (SMEM) of the same shape"

# A fix's unsafe note where a TPU semaphore becomes scratch of a grid of several blocks.
TPU_SCRATCH_SEMAPHORE_SCOPE = ("a scratch semaphore is shared by the grid iterations on one core, not across cores, "
                               "and a \"parallel\" grid dimension may split the grid over a chip's cores")

# Likewise where the semaphore becomes scratch of a pl.kernel over a TensorCore mesh.
TPU_MESH_SCRATCH_SEMAPHORE_SCOPE = "a scratch semaphore belongs to one core of the mesh, not to all of them"

# Allocation types a fix can spell from their value alone: constructor -> the module it lives in.
_SPELLABLE = {"plgpu.SMEM": "jax.experimental.pallas.mosaic_gpu", "plgpu.TMEM": "jax.experimental.pallas.mosaic_gpu"}


def _regular_code(builder: FixBuilder, model, shape) -> str:
    """`plgpu.SemaphoreType.REGULAR`, shaped like the semaphore asked for."""
    _, imports = builder.file(model)
    module = imports.name(_SPELLABLE["plgpu.SMEM"])
    return f"{module}.SemaphoreType.REGULAR" + (f"({tuple_code(shape)})" if shape else "")


def _only_interpret_true(project, entry) -> bool:
    """The launch certainly runs under `interpret=True`'s interpreter, and only there."""
    return bool(entry.interpret) and not entry.maybe_interpret and all(
        site_interpreter(project, entry, site) == "hlo" for site in entry.interpret)


def _movable_type(model, call: ast.Call, value: MemType, builder: FixBuilder, entries, spell: bool = False,
                  launch_model=None, afterwards: list | None = None, argument: ast.expr | None = None) -> str:
    """The scratch type's code at the launch: the argument with each name carried there (kept where the launch
    sees the same one, `self` as the launch's instance, a partial's parameter as its argument: see
    `type_in_scope`; in a launch of another module, each name imported there or bound at the launch); else spelled
    from its value (`plgpu.SMEM((128,), jnp.float32)`), never where the value may differ between runs (a
    parameter, a config): spelled, it would hold for one configuration only."""
    launch_model = launch_model or model
    argument = argument or (call.args[0] if call.args else None)
    if argument is None or isinstance(argument, ast.Starred):
        raise CannotFix("get_global has no plain argument")
    if not spell:
        hoisted: list[tuple[str, str]] = []
        in_spec = any(grid_spec_site(builder.project, e) is not None for e in entries) or launch_model is not model
        carried = type_at_launches(builder.project, model, argument, entries, None if in_spec else hoisted)
        if carried is not None:
            for name, code in hoisted:
                if code:  # "": the launch's function already binds it so
                    _assign_before_launches(builder, entries, name, code)
            if afterwards is not None:  # once the get_global's statement is gone, the later one first
                afterwards.append(lambda: _drop_locals_read_only_by(builder, model, argument))
            return carried
    varying = depends_on_a_variable(builder.project, model, argument)
    if varying is not None:
        raise CannotFix(f"the buffer's type depends on {varying}, which the launch cannot write, and spelled from "
                        "the value it has here it would hold for one configuration only")
    spelled = spelled_type(builder, launch_model, value)
    if spelled is not None:
        return spelled
    in_home_spec = written_for_home_spec(builder.project, model, argument, entries)
    if in_home_spec is not None:
        return in_home_spec
    if launch_model is not model:
        raise CannotFix("the launch is in another module, where the buffer's type cannot be spelled from its value")
    raise CannotFix(f"{model.segment(argument, 40)} cannot be written at the launch")


def _drop_locals_read_only_by(builder: FixBuilder, model, argument: ast.AST) -> None:
    """Remove the body's locals that only fed the moved type (`block_rows = x_ref.shape[0]`): plain expressions of
    the refs that nothing else reads once the get_global is gone."""
    from .kernel_edits import remove_statement

    scope = model.scope_of(argument)
    inside = {id(n) for n in ast.walk(argument)}
    for name in {n.id for n in ast.walk(argument) if isinstance(n, ast.Name)}:
        bindings = model.scopes[scope].bindings.get(name, []) if scope in model.scopes else []
        if len(bindings) != 1 or bindings[0].kind != "assign" or not isinstance(bindings[0].node, ast.Assign) \
                or len(bindings[0].node.targets) != 1 or not isinstance(bindings[0].node.targets[0], ast.Name) \
                or not all(isinstance(n, _PLAIN_NODES) for n in ast.walk(bindings[0].value)):
            continue
        reads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Load) and model.lookup(name, model.scope_of(n), n.lineno) is bindings[0]]
        if reads and all(id(n) in inside for n in reads):
            remove_statement(builder, model, bindings[0].node)


# What a local that only fed the buffer's type may be made of, to be removed with it: no call, nothing that runs.
_PLAIN_NODES = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.Load,
                ast.operator, ast.unaryop, ast.Slice)


def _assign_before_launches(builder: FixBuilder, entries, name: str, code: str) -> None:
    """`name = code` written just before each launch's statement (`acc_aval = accumulator_type((BLOCK_TOKENS,
    BLOCK_FEATURES), x.dtype)`), where the scratch type reads it."""
    for entry in entries:
        statement = launch_statement(entry.model, entry)
        file, _ = builder.file(entry.model)
        target = file.find_ast(entry.model, statement, cst.BaseStatement) if statement is not None else None
        block = file.parent(target) if target is not None else None
        if not isinstance(block, cst.IndentedBlock):
            raise CannotFix("the launch is not a statement of a function, where the buffer's type could be computed")
        position = list(block.body).index(target)
        assignment = cst.parse_statement(f"{name} = {code}\n")

        def insert(updated, position=position, assignment=assignment):
            body = list(updated.body)
            body.insert(position, assignment)
            return updated.with_changes(body=body)

        file.rewrite(block, insert)


def spelled_type(builder: FixBuilder, model, value: MemType) -> str | None:
    """The code of an SMEM, TMEM, REGULAR semaphore or barrier type spelled from its value in `model`
    (`plgpu.SMEM((128,), jnp.float32)`), or None where the value does not say it all."""
    if value.constructor in _SPELLABLE and value.shape is not None and value.dtype is not None:
        _, imports = builder.file(model)
        module = imports.name(_SPELLABLE[value.constructor])
        jnp = imports.name("jax.numpy")
        return f"{module}.{value.constructor.split('.')[-1]}({tuple_code(value.shape)}, {jnp}.{value.dtype})"
    if value.constructor == "plgpu.SemaphoreType.REGULAR" and value.shape is not None:
        return _regular_code(builder, model, value.shape)
    return _barrier_code(builder, model, value)


def as_smem(value: MemType) -> MemType:
    """A TPU `pltpu.VMEM` type as the GPU's `plgpu.SMEM` of the same shape and dtype."""
    return replace(value, constructor="plgpu.SMEM", space="smem")


def _barrier_code(builder: FixBuilder, model, value: MemType) -> str | None:
    """`plgpu.Barrier(num_arrivals=1)` spelled from its value (JAX takes its arguments by keyword only),
    or None where one of them is not known statically."""
    from ..analysis.evaluate import NOT_STATIC

    details = dict(value.details)
    if (value.constructor != "plgpu.Barrier" or value.shape is None or len(value.shape) > 1
            or not set(details) <= {"num_arrivals", "orders_tensor_core"}
            or any(v is NOT_STATIC or type(v) not in (int, bool) for v in details.values())):
        return None
    _, imports = builder.file(model)
    parts = [f"{key}={details[key]!r}" for key in ("num_arrivals", "orders_tensor_core") if key in details]
    parts += [f"num_barriers={value.shape[0]}"] if value.shape else []
    return f"{imports.name(_SPELLABLE['plgpu.SMEM'])}.Barrier({', '.join(parts)})"


def launch_blocks(entry) -> int | None:
    """Blocks a launch runs: its grid's, times its cluster's (None: not known)."""
    _, blocks = grid_rank(entry)
    found = entry.kernel.kwarg("cluster")
    if found is None or blocks is None:
        return blocks
    value = found[0]
    items = value.items if isinstance(value, Seq) else [value]
    for item in items:
        if not (isinstance(item, Const) and type(item.value) is int):
            return None
        blocks *= item.value
    return blocks


def _names_mosaic_gpu(model) -> bool:
    """The module imports Mosaic GPU (`from jax.experimental.pallas import mosaic_gpu as plgpu`)."""
    for node in model.tree.body:
        if isinstance(node, ast.Import) and any("mosaic_gpu" in alias.name for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and ("mosaic_gpu" in (node.module or "")
                                                 or any(alias.name == "mosaic_gpu" for alias in node.names)):
            return True
    return False


def _own_gpu_interpreters(project, entries, launch_model, refusal: str, keep: tuple[str, ...]) -> list[ast.AST]:
    """What makes these launches run under the GPU interpreter, where it serves this launch alone and can become
    interpret=True (unsafe: another interpreter): the launch's own `interpret=plgpu.InterpretGPUParams(...)`
    value, or a `with plgpu.force_gpu_interpret_mode():` around the launch's own call (a debugging entry
    point: it keeps running on the CPU, under `interpret=True`). Any other way of asking for an interpreter not
    in `keep` (a wrapper, a context around other kernels too) is refused with `refusal`."""
    nodes = []
    for entry in entries:
        for site in [*entry.interpret, *entry.maybe_interpret]:
            if site_interpreter(project, entry, site) in keep:
                continue
            keyword = entry.kernel.kwarg("interpret")
            if keyword and keyword[1] is site.node and site.node is not entry.node and site.model is launch_model:
                nodes.append(site.node)
            elif _forced_around_launch(project, entry, site, launch_model) is not None:
                nodes.append(entry)
            else:
                raise CannotFix(refusal)
    return nodes


def _forced_around_launch(project, entry, site, launch_model) -> ast.With | None:
    """The `with plgpu.force_gpu_interpret_mode():` (default parameters, its only item) that `site` is, where the
    launch's own call is in its body and no other launch is interpreted by it: then the launch can say
    `interpret=True` itself, and the `with` go."""
    from ..analysis.kernels import KernelIndex

    node, model = site.node, site.model
    item = model.parents.get(node)
    statement = model.parents.get(item)
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(item, ast.withitem)
            and isinstance(statement, ast.With) and len(statement.items) == 1 and item.optional_vars is None
            and model is launch_model and entry.model is model and isinstance(entry.node, ast.Call)
            and entry.node is entry.kernel.node and not entry.kernel.kwarg("interpret")):
        return None
    callee = project.evaluator.value(model, node.func)
    if getattr(callee, "name", None) != "plgpu.force_gpu_interpret_mode":
        return None
    if len(statement.body) != 1:
        return None  # other statements may run other kernels the context interprets too
    inside, parent = False, model.parents.get(entry.node)
    while parent is not None and not inside:
        inside, parent = parent is statement, model.parents.get(parent)
    others = [e for e in KernelIndex.of(project, model).entries if e is not entry
              and any(s.node is node for s in [*e.interpret, *e.maybe_interpret])]
    return statement if inside and not others else None


def _interpret_true(builder: FixBuilder, project, launch_model, target) -> None:
    """`interpret=True` for one GPU interpreter `_own_gpu_interpreters` found: the launch's keyword replaced, or
    the `with plgpu.force_gpu_interpret_mode():` around the launch unwrapped and the keyword added."""
    from .run_compiled import unwrap_with

    if isinstance(target, ast.AST):
        replace_expression(builder, launch_model, target, "True")
        return
    entry = target
    site = next(s for s in [*entry.interpret, *entry.maybe_interpret]
                if _forced_around_launch(project, entry, s, launch_model) is not None)
    statement = _forced_around_launch(project, entry, site, launch_model)
    unwrap_with(builder, launch_model, statement, statement.items[0])
    file, _ = builder.file(launch_model)
    launch = file.find_ast(launch_model, entry.node, cst.Call)
    if launch is None:
        raise CannotFix("the launch was not found")
    file.rewrite(launch, lambda updated: call_with_keyword(updated, "interpret", "True"))


def fix(project, model, call, value, code: str, argument: ast.expr | None = None, builder: FixBuilder | None = None):
    """The fix; with `argument` (the type's expression where it is not `call`'s argument: `call` is a helper's call
    that gives the buffer) and `builder` (the fix's other edits), (title, unsafe note) instead."""
    if not isinstance(value, MemType):
        return None
    regular_interpreted = code == "PAL002" and value.is_gpu_global_semaphore
    tpu_semaphore = value.constructor.startswith("pltpu.SemaphoreType.")
    tpu_vmem = code in ("PAL001", "PAL002") and value.constructor == "pltpu.VMEM"
    if not (value.space in _BLOCK_LOCAL or regular_interpreted or tpu_semaphore or tpu_vmem
            or (code == "PAL001" and value.constructor in SIGNALLED_TYPES)):
        return None
    located = locate(project, model, call)
    if located is None:
        return None
    use, where, entries = located
    if not entries or len({e.api for e in entries}) != 1 or entries[0].api not in _LAUNCHES:
        return None
    # A pl.kernel over a TensorCore mesh lowers (and the TPU interpreter runs) its scratch_types (jax 0.12).
    tpu_mesh = entries[0].api == "pl.kernel" and all(compiled_backend(project, e) == TPU_TC for e in entries)
    if not (SCRATCH_KEYWORDS[entries[0].api].mosaic_gpu_lowers or tpu_mesh) and not all(
            _only_interpret_true(project, e) for e in entries):
        raise CannotFix(f"a compiled {entries[0].api} takes no scratch (Mosaic GPU: '{MOSAIC_GPU_SCRATCH_REFUSAL}')")
    vmem_kept = False  # a TPU pallas_call's VMEM buffer: VMEM scratch as written (TPU keeps it across the grid)
    if tpu_vmem and (entries[0].api == "pl.pallas_call" or tpu_mesh):
        if _names_mosaic_gpu(model) or any(_names_mosaic_gpu(e.model) for e in entries) or any(
                gpu_interpreted(project, e) for e in entries):
            # A GPU (Triton) kernel, or the GPU interpreter, has no such memory; interpret=True (an `interpret=`
            # parameter that may be True: megablox's gmm) and the TPU interpreter run VMEM scratch (jax 0.12)
            return None
        tpu_vmem, vmem_kept = False, True
    if tpu_vmem and (value.shape is None or not value.dtype):
        return None  # as the GPU's SMEM it is spelled from its shape and dtype
    as_regular = False  # a TPU type or BARRIER, only signalled, in a GPU kernel interpret=True runs
    if code == "PAL001" and value.constructor in SIGNALLED_TYPES and entries[0].api != "pl.pallas_call":
        if not (all(_only_interpret_true(project, e) for e in entries) and result_only_signalled(model, call)):
            return None  # compiled: use_global_semaphore makes it a global REGULAR semaphore
        as_regular = tpu_semaphore = True
    elif (code == "PAL001" and value.constructor == "plgpu.SemaphoreType.BARRIER"
          and all(_only_interpret_true(project, e) for e in entries)):
        # A pallas_call only interpret=True runs (compiled, Triton has neither): a REGULAR scratch semaphore
        # counts signals and waits as the BARRIER one would (jax 0.12 runs both).
        if not (result_only_signalled(model, call) or uses_only_signalled(project, model, call)):
            return None
        as_regular = tpu_semaphore = True
    elif tpu_semaphore and entries[0].api != "pl.pallas_call" and not tpu_mesh:
        return None  # a Mosaic GPU kernel: use_global_semaphore makes it a GPU semaphore
    elif value.constructor in SIGNALLED_TYPES and not tpu_semaphore:
        return None  # a BARRIER semaphore in a pallas_call: no scratch form keeps it
    launch_models = {id(e.model): e.model for e in entries}
    if len(launch_models) != 1:
        raise CannotFix("the launches are in several modules")
    launch_model = next(iter(launch_models.values()))  # another module's: the type is spelled there from its value
    if "Barrier" not in value.constructor and value.space not in _BLOCK_LOCAL and any(
            u.kind == "barrier" for u in uses_of(project, model, call)):
        # A scratch semaphore is no barrier either (jax 0.12: "barrier must be a SMEM reference").
        raise CannotFix("the semaphore is used as a barrier, which a scratch semaphore is not")
    if "Barrier" in value.constructor and any(
            site_interpreter(project, e, site) == "hlo" for e in entries for site in [*e.interpret, *e.maybe_interpret]):
        raise CannotFix("interpret=True runs no barrier (jax 0.12: 'NotImplementedError: barrier')")
    unsafe = ""
    to_interpret_true = []  # `interpret=plgpu.InterpretGPUParams(...)` keywords that become interpret=True
    if tpu_semaphore and not as_regular:
        # A TPU semaphore type in a pallas_call the GPU interpreter runs (jax 0.12: 'KeyError: SEMAPHORE')
        to_interpret_true = _own_gpu_interpreters(
            project, entries, launch_model,
            "the GPU interpreter (plgpu.InterpretGPUParams) allocates no TPU semaphore as scratch",
            keep=("hlo", "tpu"))  # interpret=True's and the TPU interpreter run a TPU scratch semaphore
        if any(not (e.interpret or e.maybe_interpret) and compiled_backend(project, e) == TRITON for e in entries) \
                and (_names_mosaic_gpu(model) or _names_mosaic_gpu(launch_model)):
            # A TPU type in a bare pallas_call of a module written for Mosaic GPU is a GPU kernel (Triton, setting
            # platform = "gpu"), which takes no scratch (jax 0.12: 'scratch memory not implemented in the Triton
            # backend'); PAL003's relaunch as a plgpu.kernel is the fix. A module naming only TPU is a TPU kernel.
            raise CannotFix("a compiled Triton pallas_call takes no scratch, and the module is written for Mosaic GPU")
    if value.constructor == "pltpu.SemaphoreType.BARRIER" and not all(_only_interpret_true(project, e) for e in entries):
        # It lowers, but as a semaphore of the kernel's own: no other device's kernel shares it (barrier_semaphore).
        raise CannotFix("a BARRIER semaphore in scratch is the kernel's own, not the barrier semaphore other devices "
                        "signal: that is pltpu.get_barrier_semaphore() with a collective_id")
    if tpu_semaphore and tpu_mesh and not value.constructor.startswith("pltpu.SemaphoreType.DMA"):
        unsafe = TPU_MESH_SCRATCH_SEMAPHORE_SCOPE  # a DMA semaphore is signalled by the core's own copies
    elif tpu_semaphore:  # TPU has no global semaphores; a scratch one lowers and interprets (jax 0.12)
        for entry in entries:
            if launch_blocks(entry) != 1:
                # TPU scratch persists across the grid's iterations on a core (PAL003 says so too), but not
                # across cores: a "parallel" dimension may split the grid over a chip's TensorCores.
                unsafe = TPU_SCRATCH_SEMAPHORE_SCOPE
    if regular_interpreted:
        # interpret=True (or a value that may be True: a constant, the environment) runs a scratch
        # semaphore, and a compiled kernel lowers one; the GPU interpreter runs none (jax 0.12:
        # `NotImplementedError: nan + semaphore`).
        to_interpret_true = _own_gpu_interpreters(
            project, entries, launch_model, "the GPU interpreter (plgpu.InterpretGPUParams, "
            "force_gpu_interpret_mode, set_gpu_interpret_mode) runs no semaphore, global or scratch", keep=("hlo",))
        for entry in entries:
            if launch_blocks(entry) != 1:
                unsafe = "the grid has more than one block, so the semaphore is no longer shared by all of them"
    if to_interpret_true:
        instead = " and ".join(dict.fromkeys("plgpu.force_gpu_interpret_mode()" if not isinstance(t, ast.AST)
                                             else "plgpu.InterpretGPUParams" for t in to_interpret_true))
        unsafe = ("the GPU interpreter runs no semaphore: interpret=True runs it instead of "
                  + instead + (f", and {unsafe}" if unsafe else ""))
    outer = builder is not None
    builder = builder or FixBuilder(project)
    for target in to_interpret_true:
        _interpret_true(builder, project, launch_model, target)
    afterwards: list = []  # edits once the get_global is moved
    type_code = (lambda: _regular_code(builder, launch_model, value.shape)) if as_regular else (
        lambda: _movable_type(model, call, value, builder, entries, launch_model=launch_model, afterwards=afterwards,
                              argument=argument))
    guard = _static_guard(project, model, use, where, entries) if not as_regular else None
    if guard is not None:  # `if save_acc:` in the body: the entry only where the launch's value says so
        unguarded = type_code
        type_code = lambda: f"({unguarded()} if {guard} else None)"
    if tpu_vmem:  # the GPU's on-chip memory of the same shape: what a Mosaic GPU kernel has instead
        unsafe = TPU_VMEM_AS_SMEM
        type_code = lambda: _movable_type(model, call, as_smem(value), builder, entries, spell=True,
                                          launch_model=launch_model, argument=argument)
    note = move_to_scratch(builder, model, use, where, entries, type_code)
    for edit in afterwards:
        edit()
    owner = constructed_class(where.use.model, where.helper) if where.helper is not None else None
    through = (f", through {owner.name if owner is not None else where.helper.name}"
               if where.helper is not None else "") + note
    kind = " a plgpu.SemaphoreType.REGULAR" if as_regular else " plgpu.SMEM" if tpu_vmem else \
        " VMEM" if vmem_kept else ""
    if to_interpret_true:
        through += ", run with interpret=True"
    title = (f"pallas-lsp ({code}): Allocate {use.name or stored_as(use) or 'the buffer'} as{kind} scratch "
             f"({SCRATCH_KEYWORDS[entries[0].api].keyword}){through}")
    if outer:
        return title, unsafe
    if unsafe:
        return builder.fix(f"{title} (unsafe: {unsafe})", "unsafe")
    return builder.fix(title, "safe", preferred=True)


def _static_guard(project, model, use, where, entries) -> str | None:
    """The launch's code for the `if` test the get_global's statement is under, in the launched body of a TPU
    `pl.pallas_call` (`if save_acc: acc = pl.get_global(...)`, `save_acc` bound by the launch's partial): a Python
    `if`, so a value fixed when the kernel is traced, and the scratch entry is `(T if save_acc else None)` as the
    kernel's authors write it (a None entry passes None to the body). None where there is no such `if`."""
    statement = use.statement or model.parents.get(use.call)
    branch = model.parents.get(statement)
    if not (isinstance(branch, ast.If) and statement in branch.body and where.helper is None
            and model.enclosing_function(branch) is use.function
            and all(e.api == "pl.pallas_call" and compiled_backend(project, e) == TPU_TC for e in entries)):
        return None
    if any(isinstance(n, (ast.Call, ast.Subscript, ast.Lambda, ast.NamedExpr)) for n in ast.walk(branch.test)):
        return None  # a value computed in the body (`pl.program_id(0) == 0` is traced, no Python `if` of it)
    return type_at_launches(project, model, branch.test, entries)


def _before_keyword_bound(body: ast.FunctionDef, entries) -> int | None:
    """The new scratch parameter's position: before the first parameter a launch's partial binds by keyword
    (jax's hopper matmul `kernel(a_gmem, b_gmem, c_gmem, out_gmem, config)`, launched as
    `functools.partial(kernel, config=config)`), where JAX's refs would otherwise fill it; None: last positional."""
    bound = set().union(*(keyword_bound(e.kernel.body) for e in entries)) if entries else set()
    return next((n for n, arg in enumerate(body.args.args) if arg.arg in bound), None)


def move_to_scratch(builder: FixBuilder, model, use, where, entries, type_code, fallback: str = "scratch_ref",
                    keyword_name: str | None = None) -> str:
    """The get_global's buffer becomes the bodies' new last (or keyword-only) parameter, allocated by
    `type_code()` at the end of every launch's scratch_shapes/scratch_types (`keyword_name`: that of the
    launch the fix makes of it). Returns the title's note on other bodies that take it unused (see
    `give_to_siblings`)."""
    keyword_name = keyword_name or SCRATCH_KEYWORDS[entries[0].api].keyword
    forms = set()
    # A launch with a grid spec takes scratch in it only: (its call, its scratch as written) by launch.
    in_grid_spec = {}
    through_helper = {}  # a launch a helper shares among bodies: the calls passing this body give its scratch
    for _, body, body_entries in where.bodies:
        for entry in body_entries:
            found = helper_launch(builder.project, entry, body)
            if found is not None:
                through_helper[id(entry)] = found
    for entry in entries:
        site = grid_spec_site(builder.project, entry) if keyword_name == "scratch_shapes" else None
        if site is not None and id(entry) in through_helper:
            raise CannotFix("the grid spec of a launch shared by several bodies would give the buffer to all of them")
        if site is not None:
            spec_model, spec = site
            in_grid_spec[id(entry)] = spec_model, spec, scratch_argument(builder.project, spec_model, spec)
            node = in_grid_spec[id(entry)][2]
        else:
            found = entry.kernel.kwarg(keyword_name)
            node = found[1] if found else None
        as_dict = isinstance(node, ast.Dict) or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                                                 and node.func.id == "dict")
        forms.add(as_dict)
    if len(forms) != 1:
        raise CannotFix("the launches pass scratch differently")
    as_dict = forms.pop()
    code = type_code()
    helper_name = take_name(builder, where, fallback, body_side=True)
    name = bodies_name(where, helper_name)
    split = False  # `*refs` split where the get_global was: `*refs, name = scratch`
    for body_model, body, body_entries in where.bodies:
        if not as_dict and where.helper is not None and any(
                forwards_refs(m, c) and m.enclosing_function(c) is body for m, c in where.calls):
            continue  # `def body(*args): helper(i, *args)`: the new last ref reaches the helper in *args
        unpacked = tail_unpacking(body) if not as_dict else None
        if unpacked is not None:  # `def body(x_ref, *refs)`: the new last ref is one more name of its tail
            append_to_unpacking(builder, body_model, unpacked, name)
            continue
        if not as_dict and len(where.bodies) == 1 and where.helper is None and not where.siblings \
                and body is use.function and vararg_split_point(body, use):
            split_vararg(builder, body_model, body, use)
            split = True
            continue
        if not as_dict and len(where.bodies) == 1 and where.helper is None and not where.siblings \
                and body is use.function and front_indexed_vararg(body, use):
            # `ins, out = refs[:n], refs[n]`: the new last ref is `refs[-1]`, where the get_global was
            replace_expression(builder, body_model, use.call, f"{body.args.vararg.arg}[-1]")
            split = True
            continue
        check_parameters(body, keyword=as_dict)
        add_parameter(builder, body_model, body, name, _before_keyword_bound(body, body_entries), keyword=as_dict)
    note = give_to_siblings(builder, where, name, None, keyword=as_dict)
    if not as_dict:
        pass_through_named_lambdas(builder, entries, name)
    if where.helper is not None:
        thread_through_helper(builder, where, helper_name, name)
    if not split:
        remove_get_global(builder, model, use, helper_name)
    for entry in entries:
        if isinstance(code, HomeSpecCode) and id(entry) not in in_grid_spec:
            raise CannotFix("the buffer's type is written where the grid spec is built, and this launch has none")
        if id(entry) in through_helper:
            scratch_through_helper(builder, entry, through_helper[id(entry)], keyword_name, code)
        elif id(entry) in in_grid_spec:
            spec_model, spec, written = in_grid_spec[id(entry)]
            in_spec = str(code) if isinstance(code, HomeSpecCode) else code_in_spec(builder, spec_model, spec, entry,
                                                                                   code)
            if in_spec is None:
                raise CannotFix("the grid spec is built in a function where the scratch type's names mean "
                                "something else")
            edit_sequence_argument(builder, spec_model, spec, keyword_name, written, in_spec, first=False,
                                   dict_key=name if as_dict else None, add_if_missing=True)
        else:
            edit_sequence_keyword(builder, entry, keyword_name, code, first=False,
                                  dict_key=name if as_dict else None, add_if_missing=True)
    helpers = dict.fromkeys(h.helper.name for h in through_helper.values())
    return note + (" in the grid spec" if in_grid_spec else "") + "".join(
        f", given by the calls of {name}" for name in helpers)
