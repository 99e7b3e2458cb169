"""Arrays made outside a kernel and the shapes and dtypes written at a launch, as abstract values:
`jnp.zeros((8, 128), jnp.float32)`, `x.shape`, `(8, 128)`, `jnp.float32`."""

from __future__ import annotations

from .arithmetic import product
from .values import UNKNOWN, Api, Array, Const, Partial, Seq, ShapeDtype, Value

_DTYPES = {
    "float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool", "int4", "uint4", "complex64", "complex128", "float8_e4m3fn",
    "float8_e5m2", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn",
}

# Arrays made outside a kernel: where each takes its shape and dtype (positionally), and the dtype
# when none is given (jax without x64; None: from the fill value).
ARRAYS = {
    "jnp.zeros": (0, 1, "float32"), "jnp.ones": (0, 1, "float32"), "jnp.empty": (0, 1, "float32"),
    "jnp.full": (0, 2, None),
    "jax.random.normal": (1, 2, "float32"), "jax.random.uniform": (1, 2, "float32"),
    "jax.random.truncated_normal": (3, 4, "float32"), "jax.random.randint": (1, 4, "int32"),
    "jax.random.bits": (1, 2, "uint32"),
}
# An array's methods that transform it (analysis/array_transforms.py): `x.reshape(8, -1)`, `x.astype(dt)`.
ARRAY_METHODS = {"reshape": "jax.Array.reshape", "astype": "jnp.astype", "transpose": "jax.Array.transpose"}
LIKE_ARRAYS = {"jnp.zeros_like", "jnp.ones_like", "jnp.empty_like", "jnp.full_like"}


def dtype_name(value: Value) -> str | None:
    if isinstance(value, Api):
        name = value.name.rsplit(".", 1)[-1]
        name = "bool" if name == "bool_" else name
        return name if name in _DTYPES else None
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value if value.value in _DTYPES else None
    return None


def shape_of(value: Value) -> tuple[int, ...] | None:
    if isinstance(value, Seq) and all(isinstance(i, Const) and type(i.value) is int for i in value.items):
        return tuple(i.value for i in value.items)
    if isinstance(value, Const) and type(value.value) is int:
        return (value.value,)
    return None


def array_attribute(array: Array | ShapeDtype, attr: str) -> Value:
    """`x.shape`, `x.dtype`, `x.ndim`, `x.size` of an array (or ShapeDtypeStruct) of known parts."""
    if attr == "shape" and array.shape is not None:
        return Seq(tuple(Const(d) for d in array.shape))
    if attr == "dtype" and array.dtype is not None:
        return Api(f"jnp.{array.dtype}")
    if attr == "ndim" and array.shape is not None:
        return Const(len(array.shape))
    if isinstance(array, Array) and attr in ARRAY_METHODS:  # `x.reshape(...)`: jnp's, given `x` first
        return Partial(Api(ARRAY_METHODS[attr]), (array,), ())
    if isinstance(array, Array) and attr == "T" and array.shape is not None:
        return Array(tuple(reversed(array.shape)), array.dtype, f"{array.source}.T")
    if attr == "size" and array.shape is not None:
        size = product(array.shape)  # bounded: a shape too big to count is unknown
        return UNKNOWN if size is None else Const(size)
    return UNKNOWN


def _fill_dtype(fill: Value) -> str | None:
    if isinstance(fill, Const):
        kind = type(fill.value)
        return {bool: "bool", int: "int32", float: "float32"}.get(kind)
    return fill.dtype if isinstance(fill, (Array, ShapeDtype)) else None


def array_value(name: str, args: list[Value], kwargs: dict[str, Value], source: str) -> Value:
    shape_at, dtype_at, default = ARRAYS[name]
    shape_value = args[shape_at] if len(args) > shape_at else kwargs.get("shape")
    dtype_value = args[dtype_at] if len(args) > dtype_at else kwargs.get("dtype")
    if shape_value is None:
        shape = () if name.startswith("jax.random.") else None
    else:
        shape = shape_of(shape_value)
    if dtype_value is not None:
        dtype = dtype_name(dtype_value)
    elif default is None:  # jnp.full: the fill value's dtype
        fill = args[1] if len(args) > 1 else kwargs.get("fill_value", UNKNOWN)
        dtype = _fill_dtype(fill)
    else:
        dtype = default
    return Array(shape, dtype, source)


# Arrays made from Python data: `jnp.array([40, 64], jnp.int32)`.
FROM_DATA = {"jnp.array", "jnp.asarray"}


def array_from_data(args: list[Value], kwargs: dict[str, Value], source: str) -> Value:
    """The array `jnp.array(data, dtype)` makes of a literal (nested lists or tuples of numbers): its shape, and
    its dtype given or, without x64, jax's for the numbers (int32, float32, bool)."""
    if not args or set(kwargs) - {"dtype"}:
        return UNKNOWN
    shape, leaves = _data_shape(args[0])
    if shape is None:
        return UNKNOWN
    given = args[1] if len(args) > 1 else kwargs.get("dtype")
    if given is not None and given != Const(None):
        dtype = dtype_name(given)
    elif leaves and all(type(v) is bool for v in leaves):
        dtype = "bool"
    elif leaves and all(type(v) in (int, bool) for v in leaves):
        dtype = "int32"
    elif leaves and all(type(v) in (int, float, bool) for v in leaves):
        dtype = "float32"
    else:
        dtype = None
    return Array(shape, dtype, source)


def _data_shape(value: Value) -> tuple[tuple[int, ...] | None, list]:
    if isinstance(value, Const) and type(value.value) in (int, float, bool):
        return (), [value.value]
    if not isinstance(value, Seq) or not value.items:
        return None, []
    inner = [_data_shape(item) for item in value.items]
    shapes = {shape for shape, _ in inner}
    if len(shapes) != 1 or None in shapes:
        return None, []
    return (len(value.items), *inner[0][0]), [leaf for _, leaves in inner for leaf in leaves]
