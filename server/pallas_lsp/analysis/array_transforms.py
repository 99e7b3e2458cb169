"""Operands transformed before a launch, as abstract arrays: `jnp.expand_dims(sx, axis=(-1, -2))`,
`jnp.reshape(x, (8, -1))` / `x.reshape(8, -1)`, `jnp.transpose(x)` / `x.T` of an array of known shape
keep its dtype and take the shape JAX gives them; `x.astype(jnp.bfloat16)` / `jnp.astype` keep its
shape. Anything else (an axis that is not a literal, a shape that does not fit) is unknown, never a
guess."""

from __future__ import annotations

from .arithmetic import product
from .arrays import dtype_name, shape_of
from .values import UNKNOWN, Array, Const, Seq, ShapeDtype, Value

TRANSFORMS = {"jnp.expand_dims", "jnp.reshape", "jnp.transpose", "jnp.astype", "jax.Array.reshape",
              "jax.Array.transpose"}


def transformed(name: str, args: list[Value], kwargs: dict[str, Value], source: str) -> Value:
    array = args[0] if args else kwargs.get("a")
    if not isinstance(array, (Array, ShapeDtype)) or array.shape is None:
        return UNKNOWN
    if name.startswith("jax.Array.") and len(args) > 2:  # `x.reshape(8, -1)`: the dims one by one
        args = [array, Seq(tuple(args[1:]))]
    second = args[1] if len(args) > 1 else kwargs.get({"jnp.expand_dims": "axis", "jnp.reshape": "shape",
                                                         "jax.Array.reshape": "shape", "jnp.astype": "dtype",
                                                         "jnp.transpose": "axes", "jax.Array.transpose": "axes"}[name])
    if name == "jnp.astype":
        dtype = dtype_name(second) if second is not None else None
        return UNKNOWN if dtype is None else Array(array.shape, dtype, source)
    if name == "jnp.expand_dims":
        shape = _expand_dims(array.shape, second)
    elif name.endswith("reshape"):
        shape = _reshape(array.shape, second)
    else:
        shape = _transpose(array.shape, second)
    return UNKNOWN if shape is None else Array(shape, array.dtype, source)


def _ints(value: Value | None) -> tuple[int, ...] | None:
    if isinstance(value, Const) and type(value.value) is int:
        return (value.value,)
    if isinstance(value, Seq) and all(isinstance(i, Const) and type(i.value) is int for i in value.items):
        return tuple(i.value for i in value.items)
    return None


def _expand_dims(shape: tuple[int, ...], axis: Value | None) -> tuple[int, ...] | None:
    axes = _ints(axis)
    if axes is None:
        return None
    ndim = len(shape) + len(axes)
    where = {a + ndim if a < 0 else a for a in axes}
    if len(where) != len(axes) or not all(0 <= a < ndim for a in where):
        return None  # JAX refuses repeated or out-of-range axes
    rest = iter(shape)
    return tuple(1 if i in where else next(rest) for i in range(ndim))


def _reshape(shape: tuple[int, ...], new: Value | None) -> tuple[int, ...] | None:
    dims = shape_of(new) if new is not None else None
    size = product(shape)
    if dims is None or size is None or sum(1 for d in dims if d == -1) > 1 or any(d < -1 for d in dims):
        return None
    known = product(tuple(d for d in dims if d != -1))
    if -1 in dims:
        if not known or size % known:
            return None
        dims = tuple(size // known if d == -1 else d for d in dims)
    return dims if product(dims) == size else None


def _transpose(shape: tuple[int, ...], axes: Value | None) -> tuple[int, ...] | None:
    if axes is None or axes == Const(None):
        return tuple(reversed(shape))
    order = _ints(axes)
    if order is None or sorted(a % len(shape) if shape else a for a in order) != list(range(len(shape))) or \
            any(not -len(shape) <= a < len(shape) for a in order):
        return None
    return tuple(shape[a] for a in order)
