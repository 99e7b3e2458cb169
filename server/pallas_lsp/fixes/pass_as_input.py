"""Fix: pass a global array to a `pl.pallas_call` kernel as an input with a whole-buffer BlockSpec.

What the JAX docs recommend instead of `get_global` for arrays. The body gets a new first kernel
parameter (after anything `functools.partial` binds) taking the old variable's name; the launch
gets a `pl.BlockSpec` for the whole buffer first in `in_specs` and a `jnp.zeros(shape, dtype)`
operand first: JAX zero-initialises global buffers, so the kernel sees the values it saw before.
"""

from __future__ import annotations

import ast

from ..analysis.values import MemType, ShapeDtype
from .kernel_edits import (
    CannotFix,
    FixBuilder,
    add_parameter,
    check_parameters,
    edit_sequence_keyword,
    give_to_siblings,
    pass_first_operand,
    remove_get_global,
    take_name,
    thread_through_helper,
)
from .sites import bound_positional, decorated_function, grid_rank, locate
from .type_in_scope import array_at_launch, depends_on_a_variable

PALLAS_CALL = {"pl.pallas_call"}
KERNELS = {"plgpu.kernel", "pl.kernel"}
_GLOBAL_SPACES = {"gmem", "any", "hbm"}
_NOT_ARRAYS = {"semaphore", "barrier_semaphore", "dma_sem", "barrier", "cluster_barrier"}


def movable_array(value) -> tuple[tuple[int, ...], str, str | None] | None:
    """(shape, dtype, memory space) of a global array a kernel could take as an operand instead."""
    if isinstance(value, ShapeDtype) and value.shape is not None and value.dtype is not None:
        return value.shape, value.dtype, None
    if (isinstance(value, MemType) and value.space in _GLOBAL_SPACES and value.dtype not in _NOT_ARRAYS
            and value.shape is not None and value.dtype is not None):
        return value.shape, value.dtype, value.space
    return None


def tuple_code(items) -> str:
    items = [str(i) for i in items]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def zeros_code(imports, shape, dtype: str, written: tuple[str, str] | None = None) -> str:
    """`jnp.zeros(shape, dtype)`, spelled from the values, or with the (shape, dtype) code `written`."""
    jnp = imports.name("jax.numpy")
    if written is not None:
        return f"{jnp}.zeros({written[0]}, {written[1]})"
    return f"{jnp}.zeros({tuple_code(shape)}, {jnp}.{'bool_' if dtype == 'bool' else dtype})"


def block_spec_code(imports, entry, shape, space: str | None, written: str | None = None) -> str:
    """A whole-array `pl.BlockSpec` of `shape` (or of the shape code `written`, of the same rank)."""
    pl = imports.name("jax.experimental.pallas")
    rank, _ = grid_rank(entry)
    indices = tuple_code([0] * len(shape))
    if rank is None:
        index_map = f"lambda *_: {indices}"
    else:
        index_map = f"lambda{' ' if rank else ''}{', '.join('ijklmn'[:rank])}: {indices}"
    memory = ""
    if space == "gmem":
        memory = f", memory_space={imports.name('jax.experimental.pallas.mosaic_gpu')}.GMEM"
    elif space == "any":
        memory = f", memory_space={pl}.ANY"
    return f"{pl}.BlockSpec({written or tuple_code(shape)}, {index_map}{memory})"


def _written_rank(argument) -> tuple[int, ...] | None:
    """A shape of the rank the argument's written shape has (`plgpu.GMEM((cfg.rows, 128), ...)`: 2), zeros."""
    if isinstance(argument, ast.Call) and argument.args and isinstance(argument.args[0], ast.Tuple):
        return (0,) * len(argument.args[0].elts)
    return None


def move_to_launch(project, model, call, value, apis: set[str], title: str):
    """Shared by the input and operand fixes: the buffer becomes the kernel's first operand (through
    the helper that asked for it, when a helper did)."""
    # A type built per configuration (a parameter, a config's property): carried to each launch, never the
    # one value the analysis sees (see type_in_scope), which may also be several (shape unknown).
    varying = depends_on_a_variable(project, model, call.args[0]) if call.args else None
    array = movable_array(value)
    if array is None:
        if isinstance(value, (MemType, ShapeDtype)) and getattr(value, "space", "gmem") in _GLOBAL_SPACES | {None}:
            if getattr(value, "dtype", None) not in _NOT_ARRAYS:
                if varying is None:
                    raise CannotFix("the buffer's shape or dtype is not known before the kernel runs")
                array = (_written_rank(call.args[0]), None, getattr(value, "space", None))
        if array is None:
            return None
    shape, dtype, space = array
    located = locate(project, model, call)
    if located is None:
        return None
    use, where, entries = located
    if not entries or not {e.api for e in entries} <= apis:
        return None
    builder = FixBuilder(project)
    name = take_name(builder, where, "global_ref")
    siblings, wrapped = "", ""
    for body_model, body, body_entries in where.bodies:
        offsets = {bound_positional(e) for e in body_entries}
        if len(offsets) != 1:
            raise CannotFix("the body is launched with different bound arguments")
        offset = offsets.pop()
        check_parameters(body)
        add_parameter(builder, body_model, body, name, offset)
        siblings = siblings or give_to_siblings(builder, where, name, offset)
        for entry in body_entries:
            if entry.kernel.kwarg("grid_spec") is not None:
                raise CannotFix("in_specs live in grid_spec")
            _, imports = builder.file(entry.model)
            written = None
            if varying is None and call.args and isinstance(call.args[0], (ast.Name, ast.Attribute)) \
                    and not decorated_function(entry):
                # A type held by a name (`specs.PARTIAL_SPEC`, `self.workspace_type`): its `.shape` and `.dtype`
                # where the launch sees it, not the values copied as literals.
                written = array_at_launch(project, model, call.args[0], entry)
            if varying is not None:
                written = array_at_launch(project, model, call.args[0], entry) if not decorated_function(entry) else None
                if written is None:
                    raise CannotFix(f"the array's type depends on {varying}, which the launch cannot write, and "
                                    "spelled from the value it has here it would hold for one configuration only")
            if entry.api in PALLAS_CALL and entry.kernel.kwarg("in_specs") is not None:  # absent: whole buffers
                if shape is None:
                    raise CannotFix("the array's rank, which its block's index map needs, is not known")
                edit_sequence_keyword(builder, entry, "in_specs", block_spec_code(
                    imports, entry, shape, space, written and written[0]), first=True)
            how = pass_first_operand(builder, entry, zeros_code(imports, shape, dtype, written))
            if how.startswith("wrapper:"):
                wrapped = f" (the kernel is renamed {how.split(':', 1)[1]}; {body.name} passes it the new operand first)"
    if where.helper is not None:
        thread_through_helper(builder, where, name)
    remove_get_global(builder, model, use, name)
    through = f", through {where.helper.name}" if where.helper is not None else ""
    return builder.fix(title.format(name=use.name or "the buffer") + through + siblings + wrapped, "safe",
                       preferred=True)


def fix(project, model, call, value, code: str):
    return move_to_launch(project, model, call, value, PALLAS_CALL,
                          f"pallas-lsp ({code}): Pass {{name}} as a kernel input (in_specs)")
