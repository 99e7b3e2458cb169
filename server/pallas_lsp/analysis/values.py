"""The abstract values the evaluator computes: what an expression is, as far as it can be known.

Anything not known statically is `UNKNOWN`; rules report only on values that are known.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import ModuleModel


class Value:
    """Base class of abstract values."""


@dataclass(frozen=True)
class Unknown(Value):
    pass


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Const(Value):
    value: Any  # int, float, str, bool, None


@dataclass(frozen=True)
class Seq(Value):
    items: tuple[Value, ...]


@dataclass(frozen=True)
class Api(Value):
    """A JAX (or other library) object by canonical name: `pl.get_global`, `plgpu.SemaphoreType.REGULAR`."""

    name: str


@dataclass(frozen=True)
class MemType(Value):
    """A memory-space type as `get_global`, `scratch_types` or `run_scoped` receive it.

    `space` and `dtype` use JAX's own spelling so the picture matches what JAX prints.
    """

    space: str  # gmem, smem, tmem, regs, any, vmem, hbm, semaphore_mem, ...
    shape: tuple[int, ...] | None
    dtype: str | None
    source: str  # how it was written, for messages when shape or dtype are unknown
    constructor: str  # canonical name of what built it
    # The constructor's other keywords, as (name, static value or NOT_STATIC), sorted: what tells two
    # barriers apart (`num_arrivals`) and a TMEM ref's columns (`collective`, `packed`, `layout`).
    details: tuple = ()
    # (module, constructor call) where the type was built: what a fix that changes the type edits. Not part of
    # the value (two calls building the same type are one type to every rule).
    made_at: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def picture(self) -> str | None:
        """`Ref<smem>{float32[128]}`, or None when shape or dtype are not statically known."""
        if self.shape is None or self.dtype is None:
            return None
        return f"Ref<{self.space}>{{{self.dtype}[{shape_text(self.shape, ',')}]}}"

    @property
    def is_gpu_global_semaphore(self) -> bool:
        return self.space == "gmem" and self.dtype == "semaphore"


@dataclass(frozen=True)
class ShapeDtype(Value):
    """`jax.ShapeDtypeStruct(...)`: describes an array, but is not a memory-space type."""

    shape: tuple[int, ...] | None
    dtype: str | None
    source: str


@dataclass(frozen=True)
class SemaphoreRef(Value):
    """`plgpu.alloc_semaphore(shape)` (jax 0.12): a GMEM semaphore ref made outside any kernel, which
    `plgpu.kernel` takes as an operand."""

    shape: tuple[int, ...] | None
    source: str
    indexer: bool = False  # `ref.at`: subscripting it gives a view (still a ref), not a value


@dataclass(frozen=True)
class SemaphoreArray(Value):
    """The value read out of a semaphore ref (`ref[...]`, `ref[i]`, `jax.freeze(ref)`): an array of
    semaphore dtype, which `plgpu.kernel` refuses as an operand."""

    ref: SemaphoreRef
    source: str  # how it was read, for messages


@dataclass(frozen=True)
class InterpretParams(Value):
    """`plgpu.InterpretGPUParams(...)` / `pltpu.InterpretParams(...)`: always means interpret mode."""

    name: str


@dataclass(frozen=True, eq=False)
class Func(Value):
    """A user function (def or lambda) with the frame it was created in, for closures."""

    model: "ModuleModel"
    node: ast.AST
    self_value: Value | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Func) and other.node is self.node and other.self_value == self.self_value

    def __hash__(self) -> int:
        return hash(id(self.node))

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


@dataclass(frozen=True)
class Partial(Value):
    """`functools.partial(func, *args, **kwargs)`."""

    func: Value
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...]
    node: ast.AST | None = field(default=None, compare=False)


@dataclass(frozen=True, eq=False)
class ModuleValue(Value):
    """A module of the user's workspace."""

    model: "ModuleModel"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModuleValue) and other.model is self.model

    def __hash__(self) -> int:
        return hash(id(self.model))


@dataclass(frozen=True, eq=False)
class ClassValue(Value):
    model: "ModuleModel"
    node: ast.ClassDef

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClassValue) and other.node is self.node

    def __hash__(self) -> int:
        return hash(id(self.node))


@dataclass(frozen=True)
class Instance(Value):
    cls: ClassValue
    args: tuple[Value, ...] = ()  # what the constructor was called with, for `self.x = x` in `__init__`
    kwargs: tuple[tuple[str, Value], ...] = ()
    member: str | None = None  # an `enum.Enum` member (`Buffers.RESIDUAL`): its name in the class body
    # Only declared (`cfg: Config`, a parameter nothing here passes): its fields and `self.x` are unknown, but what
    # the class says alike for every instance (a property returning barrier types, a class constant) is known.
    declared: bool = False


@dataclass(frozen=True)
class Super(Value):
    """`super()` in a method of `cls`: attributes come from its bases, bound to `receiver` (the method's `self`,
    an Instance, or `cls`, a ClassValue)."""

    cls: ClassValue
    receiver: Value


@dataclass(frozen=True, eq=False)
class KernelCall(Value):
    """The result of calling a kernel factory: `pl.pallas_call(...)`, `plgpu.kernel(...)`, and so on.

    `body` is None when the factory was called without a body (a decorator waiting for one).
    """

    api: str
    model: "ModuleModel"
    node: ast.AST  # the call (or decorator) that built it
    body: Value | None
    kwargs: tuple[tuple[str, Value, ast.AST | None], ...]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelCall) and other.node is self.node and other.body == self.body

    def __hash__(self) -> int:
        return hash(id(self.node))

    def kwarg(self, name: str) -> tuple[Value, ast.AST | None] | None:
        for key, value, node in self.kwargs:
            if key == name:
                return value, node
        return None


@dataclass(frozen=True)
class Mapping(Value):
    """A dict literal with constant keys: `{"interpret": True}`."""

    items: tuple[tuple[Any, Value], ...]

    def get(self, key: Any) -> Value | None:
        for item_key, value in self.items:
            if item_key == key:
                return value
        return None


@dataclass(frozen=True)
class OneOf(Value):
    """Several values reach here from different call sites."""

    options: tuple[Value, ...]


@dataclass(frozen=True)
class KeyedChoice(OneOf):
    """One of the functions a dict or list holds, or a class defines, looked up by a key not known (`BODIES[name]`,
    `getattr(self, f"_{name}_kernel")`): each is a body a launch of it may run; what calling it gives is not
    guessed (a key no entry has raises, and a registry of type builders is not every type it holds)."""


@dataclass(frozen=True)
class Array(Value):
    """A jax array made outside any kernel (`jnp.ones(shape, dtype)`, `jax.random.normal(key, shape)`):
    what a launch passes as an operand. `shape`/`dtype` are None where not known statically."""

    shape: tuple[int, ...] | None
    dtype: str | None
    source: str


@dataclass(frozen=True)
class Spec(Value):
    """`pl.BlockSpec(...)`, `pl.GridSpec(...)`, `pltpu.PrefetchScalarGridSpec(...)`: the constructor's
    canonical name and its arguments by parameter name."""

    constructor: str
    fields: tuple[tuple[str, Value], ...]

    def get(self, name: str) -> Value | None:
        return next((value for key, value in self.fields if key == name), None)


_EXACT_BITS = 128  # up to 2**128 (39 digits): written in full


def int_text(number: int, grouped: bool = False) -> str:
    """`str(number)` (`f"{number:,}"` grouped) for a message, never raising: past 2**128 (where Python's
    int-to-str limit, 4,300 digits by default, may be far beyond: `str` raises) it is written `≈1.23e+5000`."""
    if number.bit_length() <= _EXACT_BITS:
        return f"{number:,}" if grouped else str(number)
    magnitude = math.log10(abs(number))  # any int: it is not converted to a float
    exponent = math.floor(magnitude)
    return f"≈{'-' if number < 0 else ''}{10 ** (magnitude - exponent):.3g}e+{exponent}"


def shape_text(shape: tuple[int, ...], separator: str | None = None) -> str:
    """A shape as Python writes the tuple (`(2,)`, `(2, 3)`), or with `separator` its dims alone
    (`2,3` for JAX's `float32[2,3]`); each dim through `int_text`."""
    dims = [int_text(d) for d in shape]
    if separator is not None:
        return separator.join(dims)
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
