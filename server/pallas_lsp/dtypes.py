"""Dtype names as users write them (`f32`) and as numpy and jax spell them (`float32`): shared by the
analysis core (hovers, inlay hints) and the trace runner's argument specs, which import nothing else."""

from __future__ import annotations

# Short names users write, and the numpy names jax accepts.
DTYPES = {
    "bool": "bool", "pred": "bool",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
    "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "f8e4m3": "float8_e4m3", "f8e8m0fnu": "float8_e8m0fnu",
}
LONG_NAMES = set(DTYPES.values())
_SHORT = {long: short for short, long in reversed(list(DTYPES.items()))}


def short_dtype(name: str) -> str:
    """`float32` -> `f32`; a name without a short form stays as it is."""
    return _SHORT.get(name, name)
