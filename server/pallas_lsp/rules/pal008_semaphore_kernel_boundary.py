"""PAL008 semaphore-kernel-boundary: a semaphore crossing the kernel boundary.

A Mosaic GPU kernel cannot return a semaphore (`plgpu.kernel(..., out_type=<semaphore>)`: `ValueError:
Kernels cannot return semaphores...`), cannot take one as an array (a value read out of a
`plgpu.alloc_semaphore` ref, `sems[0]` or `jax.freeze(sems)`, passed to a `plgpu.kernel`: `ValueError:
Cannot pass semaphores into kernels as arrays...`), and a `pl.get_global` whose result is used outside
any kernel (in a function that is jitted directly) fails at lowering with `Cannot lower jaxpr with
effects: {SemaphoreEffect}`.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.evaluate import as_memtype
from ..analysis.jax_version import jax_version
from ..analysis.host_code import host_functions
from ..analysis.kernel_model import INTERPRET, MOSAIC_GPU, TPU_TC, TRITON, forwards_to_launch, kernel_launches, kernel_models, launch_operand, uses_of
from ..analysis.kernel_args import launch_field
from ..analysis.kernels import KernelIndex, get_global_calls
from ..analysis.values import Api, MemType, SemaphoreArray, Seq, Spec

CODE = "PAL008"
NAME = "semaphore-kernel-boundary"
SEVERITY = "error"
SUMMARY = "A semaphore in a kernel's outputs or passed in as an array, or a get_global used outside any kernel."

RETURN_QUOTE = "ValueError: Kernels cannot return semaphores"
OLD_RETURN_QUOTE = "ValueError: Invalid out_shape type: <enum 'SemaphoreType'>"  # jax 0.11.1 (run), for a SemaphoreType
ALLOC_SEMAPHORE_SINCE = (0, 12)
OUTSIDE_QUOTE = "Cannot lower jaxpr with effects: {SemaphoreEffect}"
OUTSIDE_READ_QUOTE = "TypeError: No ir_type_handler for aval type"  # ...: <class '...AbstractRef'>
OUTSIDE_RETURNED_QUOTE = "mutable array references cannot be returned"
EAGER_QUOTE = "NotImplementedError: Evaluation rule for 'get_global' not implemented"
OPERAND_QUOTE = "Cannot pass semaphores into kernels as arrays"
_ARRAY_OUTPUTS_ONLY = (MOSAIC_GPU, TRITON)  # pl.kernel with plgpu.Mesh; a GPU pallas_call
_SEMAPHORE_DTYPES = ("semaphore", "barrier_semaphore", "dma_sem")


def _semaphore_leaf(ctx, node: ast.AST, spaces: tuple[str, ...] = ("gmem",)) -> ast.AST | None:
    """The first semaphore type (a SemaphoreType of a memory space in `spaces`, or a ShapeDtypeStruct of
    pl.semaphore) in an out_type."""
    evaluate = ctx.project.evaluator.value
    for child in ast.walk(node):
        if not isinstance(child, (ast.Attribute, ast.Call, ast.Name)):
            continue
        value = as_memtype(evaluate(ctx.model, child))
        if isinstance(value, MemType) and value.space in spaces and value.dtype in _SEMAPHORE_DTYPES:
            return child
        if isinstance(child, ast.Call):
            callee = evaluate(ctx.model, child.func)
            if isinstance(callee, Api) and callee.name == "jax.ShapeDtypeStruct":
                dtype = child.args[1] if len(child.args) > 1 else next(
                    (k.value for k in child.keywords if k.arg == "dtype"), None)
                dtype_value = evaluate(ctx.model, dtype) if dtype is not None else None
                if isinstance(dtype_value, Api) and dtype_value.name.rsplit(".", 1)[-1] in (
                        "semaphore", "semaphore_dtype", "barrier_semaphore", "dma_semaphore"):
                    return child
    return None


def check(ctx):
    rule = sys.modules[__name__]
    yield from _outside_kernels(ctx, rule)
    yield from _semaphore_array_operands(ctx, rule)
    if "emaphore" not in ctx.model.text:
        return  # no semaphore type is named here, so none is in an out_type
    for kernel in kernel_models(ctx.project, ctx.model):
        with ctx.isolated(rule, kernel.entry.node, kernel.entry.model):
            found = kernel.entry.kernel.kwarg("out_type") or kernel.entry.kernel.kwarg("out_shape")
            if found is None or found[1] is None or found[1] not in ctx.model.parents:
                continue
            # The launch checks its outputs when it is built, interpreted or not.
            backend = kernel.compiled_backend if kernel.backend == INTERPRET else kernel.backend
            tpu_outputs = _tpu_semaphore_outputs(ctx, kernel, found)
            display, owned = found[1], True
            if tpu_outputs is not None:
                # A pallas_call returning a TPU semaphore is TPU code, whatever platform a bare one is lowered for.
                backend = TPU_TC
                leaf = next(iter(tpu_outputs), None)
            else:
                display, owned = _out_type_display(ctx.model, found[1])
                leaf = _semaphore_leaf(ctx, display, ("gmem",))
            tpu = kernel.api == "pl.pallas_call" and backend == TPU_TC
            if leaf is None and tpu_outputs == []:
                interpreted = _interpreted_semaphore_output(ctx, kernel, found)
                if interpreted is not None:
                    leaf, message = interpreted
                    yield ctx.finding(rule, leaf, message, (ctx.entry_related(kernel),),
                                      facts={"kernel": kernel, "out_type": found[1], "entry": kernel.entry})
                continue
            if leaf is None:
                continue
            if kernel.api == "plgpu.kernel":
                message = _plgpu_kernel_message(kernel)
            elif backend in _ARRAY_OUTPUTS_ONLY or tpu:
                message = _array_outputs_message(ctx, kernel, leaf, backend)
            else:
                continue  # TPU meshes and SparseCore: not run
            if message is not None:
                yield ctx.finding(rule, leaf, message, (ctx.entry_related(kernel),),
                                  facts={"kernel": kernel, "out_type": display if owned else found[1],
                                         "entry": kernel.entry})


def _out_type_display(model, node: ast.AST) -> tuple[ast.AST, bool]:
    """The tuple, list or dict display an out_type names (`out_type = {"y": ..., "ready": SEM}` then
    `out_type=out_type`: the value assigned to that name where the launch reads it), else `node` itself; and
    whether that display is this launch's alone to rewrite (written in the launch, or a function's local
    named only there)."""
    if not isinstance(node, ast.Name):
        return node, True
    scope = model.scope_of(node)
    binding = model.lookup(node.id, scope, node.lineno)
    if binding is None or binding.kind != "assign" or not isinstance(binding.value, (ast.Tuple, ast.List, ast.Dict)):
        return node, True
    mentions = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == node.id]
    owned = scope is not model.tree and len(mentions) == 2 and model.scope_of(binding.value) is scope
    return binding.value, owned


def _tpu_semaphore_outputs(ctx, kernel, found) -> list[ast.AST] | None:
    """The out_shape entries of a pallas_call that are TPU semaphore types JAX refuses: every one whose out_specs
    entry does not put it in `pltpu.SEMAPHORE` (the split async copy returns a DMA semaphore that way, and the
    TPU lowering accepts it; in `pl.ANY` or without a spec it is a block, "rank >= 1" or "dtype=dma_sem").
    None where the out_shape holds no TPU semaphore."""
    if kernel.api != "pl.pallas_call":
        return None
    out_value, out_node = found
    single = not isinstance(out_value, Seq)
    items = [out_value] if single else list(out_value.items)
    nodes = [out_node] if single else (list(out_node.elts) if isinstance(out_node, (ast.Tuple, ast.List))
                                       and len(out_node.elts) == len(items) else [out_node] * len(items))
    spec_value = launch_field(ctx.project, kernel.entry, "out_specs")  # in a grid_spec=pl.GridSpec(...) too
    if spec_value is None:
        spec_items = []  # none: every output is a block in the default memory space
    else:
        spec_items = [spec_value] if single else list(spec_value.items) if isinstance(spec_value, Seq) else None
    refused, any_semaphore = [], False
    for i, item in enumerate(items):
        memtype = as_memtype(item)
        if not (isinstance(memtype, MemType) and memtype.space == "semaphore_mem" and memtype.dtype in _SEMAPHORE_DTYPES):
            continue
        any_semaphore = True
        spec = spec_items[i] if spec_items is not None and i < len(spec_items) else None
        if spec_items is None or spec is not None and not isinstance(spec, Spec):
            continue  # out_specs not known statically
        space = spec.get("memory_space") if spec is not None else None
        if isinstance(space, Api) and space.name == "pltpu.SEMAPHORE":
            continue
        leaf = _semaphore_leaf(ctx, nodes[i], ("semaphore_mem",))
        if leaf is not None:
            refused.append(leaf)
    return refused if any_semaphore else None


def _interpreted_semaphore_output(ctx, kernel, found) -> tuple[ast.AST, str] | None:
    """(the out_shape entry, the message) of a semaphore a pallas_call returns in `pltpu.SEMAPHORE` while an
    interpreter certainly runs it: the TPU interpreter fills its outputs with NaN first (jax 0.12: `NotImplementedError:
    nan + semaphore`, `nan + dma_sem`), `interpret=True` with `full` (`'AbstractSemaphoreTyRules' has no attribute
    'full'`), used or not. None where no interpreter certainly runs it or none is returned so."""
    from ..analysis.kernel_model import site_interpreter

    interpreters = {site_interpreter(ctx.project, kernel.entry, site) for site in kernel.entry.interpret}
    if len(interpreters) != 1 or interpreters & {"gpu"}:
        return None
    out_value, out_node = found
    items = list(out_value.items) if isinstance(out_value, Seq) else [out_value]
    nodes = list(out_node.elts) if isinstance(out_node, (ast.Tuple, ast.List)) and len(out_node.elts) == len(items) \
        else [out_node] * len(items)
    for item, node in zip(items, nodes):
        memtype = as_memtype(item)
        if isinstance(memtype, MemType) and memtype.space == "semaphore_mem" and memtype.dtype in _SEMAPHORE_DTYPES:
            leaf = _semaphore_leaf(ctx, node, ("semaphore_mem",)) or node
            quote = (f"NotImplementedError: nan + {memtype.dtype}" if interpreters == {"tpu"} else
                     "AttributeError: type object 'AbstractSemaphoreTyRules' has no attribute 'full'")
            return leaf, (f'JAX: "{quote}"; allocate it {kernel.scratch_advice()}. The interpreter fills a kernel\'s '
                          "outputs before it runs, and a semaphore has no value to fill: returned in pltpu.SEMAPHORE it "
                          "runs only compiled on a TPU (for the next kernel to wait on).")
    return None


def _plgpu_kernel_message(kernel) -> str:
    if kernel.jax_version is not None and kernel.jax_version < ALLOC_SEMAPHORE_SINCE:
        # jax 0.11.x: no plgpu.alloc_semaphore yet, and out_type rejects the type itself.
        return (f'JAX: "{OLD_RETURN_QUOTE}"; allocate the semaphore in scratch_types. out_type describes '
                "the arrays a kernel returns; a semaphore lives only inside the kernel.")
    return (f'JAX: "{RETURN_QUOTE}"; allocate it in scratch_types or with plgpu.alloc_semaphore. '
            "plgpu.alloc_semaphore runs before the kernel, which takes it as an operand; out_type "
            "describes the arrays a kernel returns; a semaphore lives only inside the kernel "
            "(or in a ref made by plgpu.alloc_semaphore).")


def _array_outputs_message(ctx, kernel, leaf, backend: str) -> str | None:
    """pl.kernel (plgpu.Mesh) and a GPU or TPU pallas_call take only array types as outputs (jax 0.12 and
    0.11.1, run): a bare GPU SemaphoreType fails as an out_shape type, a shaped one on its dtype; on a TPU
    a bare TPU one (or one of shape ()) fails as a block of rank 0, a shaped one on its dtype."""
    value = ctx.project.evaluator.value(ctx.model, leaf)
    memtype = as_memtype(value)
    if not isinstance(memtype, MemType):
        return None  # a ShapeDtypeStruct of pl.semaphore fails otherwise there (not encoded)
    on_tpu = backend == TPU_TC
    if (isinstance(value, Api) or memtype.shape == ()) and on_tpu and memtype.space == "semaphore_mem":
        quote = "The Pallas TPU lowering currently supports only blocks of rank >= 1"  # a block of shape ()
    elif isinstance(value, Api):
        quote = OLD_RETURN_QUOTE
    elif on_tpu or kernel.api == "pl.pallas_call" and backend == MOSAIC_GPU:  # (Mosaic GPU: jax 0.11.1)
        quote = f"ValueError: unexpected input: dtype={memtype.dtype}"
    else:
        quote = f"TypeError: Cannot interpret '{memtype.dtype}' as a data type"
    outputs = "out_shape" if kernel.api == "pl.pallas_call" else "out_type"
    if on_tpu:
        return (f'JAX: "{quote}"; give it memory_space=pltpu.SEMAPHORE. In out_specs, '
                "pl.BlockSpec(memory_space=pltpu.SEMAPHORE): a TPU pallas_call returns a semaphore (for the next kernel to wait on: the split async copy) only in the semaphore "
                "memory space; anywhere else it is taken for an array block. For a semaphore only this kernel "
                f"uses, allocate it {kernel.scratch_advice()}.")
    where = (f"allocate it {kernel.scratch_advice()} (pltpu.SemaphoreType)" if on_tpu else
             f"allocate it {kernel.scratch_advice()}, or with pl.get_global in a plgpu.kernel for one shared by the "
             "whole grid")
    return (f'JAX: "{quote}"; {outputs} lists arrays only, not semaphores. {outputs} of {kernel.api} describes '
            f"the arrays the kernel returns; a semaphore lives only inside a kernel: {where}.")


def _semaphore_array_operands(ctx, rule):
    """A value read out of a plgpu.alloc_semaphore ref passed to a plgpu.kernel (pl.kernel takes one).

    Only where this module, or a workspace module it imports from, calls `alloc_semaphore`, the one way user
    code makes such a ref: finding the launches evaluates every call's callee (through jedi), too dear for
    every file."""
    if "alloc_semaphore" not in ctx.model.text and not _imports_from_allocating_module(ctx):
        return
    version = jax_version(ctx.project)
    if version is not None and version < ALLOC_SEMAPHORE_SINCE:
        return  # jax 0.11.x has no plgpu.alloc_semaphore: such code fails earlier (AttributeError)
    evaluate = ctx.project.evaluator.value
    for launch in kernel_launches(ctx.project, ctx.model):
        with ctx.isolated(rule, launch.call):
            if launch.api != "plgpu.kernel":
                continue
            for operand in launch.call.args:
                if isinstance(operand, ast.Starred):
                    break
                value = evaluate(ctx.model, operand)
                if not isinstance(value, SemaphoreArray):
                    continue
                message = (f'JAX: "{OPERAND_QUOTE}"; pass the alloc_semaphore ref itself, not a value read from it. '
                           f"`{value.source}` is an array made from the ref `{value.ref.source}`; plgpu.kernel takes "
                           "semaphores only as refs (pl.kernel takes either). Pass the whole ref and pick one "
                           "semaphore in the kernel body with `.at[i]`.")
                built = ctx.related(launch.kernel.model, launch.kernel.node, "the plgpu.kernel launched here")
                yield ctx.finding(rule, operand, message, (built,),
                                  facts={"operand": operand, "launch": launch.call, "value": value})


def _imports_from_allocating_module(ctx) -> bool:
    """Does a `from m import ...` of this module (a plgpu one) name a workspace module that calls alloc_semaphore
    (a helper making the ref, `sems = make_sems()`)? Resolved as imports are without jedi, by path."""
    model = ctx.model
    if not model.mentions("plgpu"):
        return False
    for statement in model.tree.body:
        if isinstance(statement, ast.ImportFrom):
            path = ctx.project.resolver.import_from_path(model, statement)
            if path is not None and "alloc_semaphore" in ctx.project.text(path):
                return True
    return False


def _outside_kernels(ctx, rule):
    """get_global at module level, or in a function handed to jax.jit (or decorated with it), or in a helper
    or loop body such a function runs, that no kernel runs."""
    calls = get_global_calls(ctx.project, ctx.model)
    if not calls:
        return
    for call in calls:
        if ctx.model.enclosing_function(call) is None:  # module (or class) level: runs when imported
            message = (f'JAX: "{EAGER_QUOTE}"; call it inside a kernel body. At module level '
                       "it runs when the module is imported, used or not, outside any kernel, and a global "
                       "semaphore exists only inside a Mosaic GPU kernel.")
            yield ctx.finding(rule, call, message, facts={"get_global": call, "model": ctx.model})
    reached = {id(s.call) for k, s in ctx.kernels_reaching()}
    if all(id(call) in reached or ctx.model.enclosing_function(call) is None for call in calls):
        return
    run_by = host_functions(ctx.project, ctx.model)
    for call in calls:
        with ctx.isolated(rule, call):
            func = ctx.model.enclosing_function(call)
            if func is None or id(func) not in run_by or id(call) in reached:
                continue
            uses = [use for use in uses_of(ctx.project, ctx.model, call) if use.live]
            live = {use.kind for use in uses}
            launch = launch_operand(ctx.project, ctx.model, call)
            if launch is not None and not any(use.model is ctx.model and use.node is not launch
                                              and ctx.model.enclosing_function(use.node) is func for use in uses):
                # Only passed into a launch (what its body does with it aside): the launch takes the ref
                # whatever its body does with it, and fails on its IR type (checked with jax 0.12).
                live = {"operand"}
            if live and all(use.model is ctx.model and isinstance(use.node, ast.Call)
                            and forwards_to_launch(ctx.project, ctx.model, use.node) for use in uses):
                live = {"operand"}  # passed into a wrapper that hands it on to a launch: the launch takes it
            if live and _bound_into_launched_bodies(ctx, uses):
                live = {"operand"}  # `functools.partial(body, sem)` launched: the body takes the ref (jax 0.12)
            if live and _closed_over_by_bodies(ctx, func, uses):
                live = {"operand"}  # a kernel body closes over the ref: it fails on its IR type (jax 0.12)
            if not live:
                continue  # jit drops an unused get_global
            host = run_by[id(func)]
            if host.function is not func and "returned" in live:
                live = (live - {"returned"}) | {"other"}  # a helper hands the ref on: what its caller does decides
            if host.jitted:
                how = ("This function is jitted directly, not run as a Pallas kernel" if host.function is func
                       else "This code runs in a jitted function, not in a Pallas kernel")
                words = "jitted here, outside any kernel"
            else:
                how = ("This code runs outside the kernel it launches (jitted; run eagerly, JAX says "
                       f'"{EAGER_QUOTE}")')
                words = "the kernel is launched here: this code runs outside it"
            message = (f'JAX: "{_outside_quote(live)}"; call get_global inside a kernel body (plgpu.kernel). '
                       f"{how}, and a global semaphore exists only inside a Mosaic GPU kernel.")
            yield ctx.finding(rule, call, message, (ctx.related(host.model, host.node, words),),
                              facts={"get_global": call, "model": ctx.model, "jit": host.node if host.jitted else None})


def _bound_into_launched_bodies(ctx, uses) -> bool:
    """Is every use an argument of a `functools.partial` of a body that a launch of this module runs (written in
    the launch, or a name assigned it once)? The body then takes the ref made outside the kernel, which fails on
    its IR type (checked with jax 0.12: 'No ir_type_handler for aval type')."""
    model, evaluate = ctx.model, ctx.project.evaluator.value
    written = set()
    for entry in KernelIndex.of(ctx.project, model).entries:
        if entry.model is not model or not isinstance(entry.node, ast.Call) or not entry.node.args:
            continue
        body = entry.node.args[0]
        if isinstance(body, ast.Name):
            binding = model.lookup(body.id, model.scope_of(body), body.lineno)
            body = binding.value if binding is not None and binding.kind == "assign" else None
        if body is not None:
            written.add(id(body))
    for use in uses:
        callee = evaluate(model, use.node.func) if use.model is model and isinstance(use.node, ast.Call) else None
        if not (isinstance(callee, Api) and callee.name == "functools.partial" and id(use.node) in written):
            return False
    return bool(uses)


def _closed_over_by_bodies(ctx, func: ast.AST, uses) -> bool:
    """Is every use in a kernel body defined in `func` (a nested def or lambda that a launch runs), which closes
    over the ref made outside it? (checked with jax 0.12: 'No ir_type_handler for aval type', signalled or not)"""
    bodies = {id(e.body.node) for e in KernelIndex.of(ctx.project, ctx.model).entries if e.body is not None}
    for use in uses:
        if use.model is not ctx.model:
            return False
        function = ctx.model.enclosing_function(use.node)
        while function is not None and ctx.model.enclosing_function(function) is not func:
            function = ctx.model.enclosing_function(function)
        if function is None or id(function) not in bodies:
            return False
    return bool(uses)


def _outside_quote(live_uses: set[str]) -> str:
    """What JAX 0.12 says first, by how the result is used (each checked with a jitted function): a
    signal or wait carries the semaphore effect; a semaphore_read alone fails on the ref's IR type; a
    returned ref is refused as a mutable output. A ref only passed into a launch (its kernel reads it, or
    drops it) fails on its IR type as a read does."""
    if live_uses & {"signal", "wait", "barrier", "other"}:
        return OUTSIDE_QUOTE
    if live_uses <= {"read", "operand"}:
        return OUTSIDE_READ_QUOTE
    return OUTSIDE_RETURNED_QUOTE
