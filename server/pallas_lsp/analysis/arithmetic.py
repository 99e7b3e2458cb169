"""Arithmetic on folded constants, bounded: a result that would be huge is never computed.

Folding `N = 10 ** 10 ** 10` (a kernel's shape) would ask Python for a number of 33 billion bits: an
analysis that never ends. So the size of a result is judged from the sizes of its operands before it
is computed: an int over MAX_INT_BITS, a string over MAX_TEXT characters, a sequence over MAX_ITEMS
values (nested ones counted) is not folded, and the value is unknown, which no rule reports on. Real
kernel code never comes near: JAX's shapes are 64-bit. (Numbers in messages: `values.int_text`.)
"""

from __future__ import annotations

import ast
import operator

from .values import UNKNOWN, Const, Instance, Mapping, OneOf, Partial, Seq, Spec, Value

MAX_INT_BITS = 1024  # about 10**308, as far as a float goes
MAX_TEXT = 65_536  # characters of a folded string (or bytes)
MAX_ITEMS = 4_096  # values in a folded sequence, nested ones counted

_NUMBER_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fits(value) -> bool:
    """Is this Python constant small enough to be a folded value?"""
    if isinstance(value, int):
        return value.bit_length() <= MAX_INT_BITS
    if isinstance(value, (str, bytes)):
        return len(value) <= MAX_TEXT
    return True


def constant(value) -> Value:
    """A constant written in the source (a hex literal can hold 20 million bits in a 5 MB file)."""
    return Const(value) if fits(value) else UNKNOWN


def fold(op: ast.operator, left, right):
    """`left op right` on Python constants, or None where it is not folded: an operation not done here, one
    Python refuses (`1 // 0`, `1 << -1`), or a result over the bounds (judged before computing it)."""
    kind = type(op)
    if is_number(left) and is_number(right) and kind in _NUMBER_OPS:
        if not _small_result(kind, left, right):
            return None
        try:
            result = _NUMBER_OPS[kind](left, right)
        except (ArithmeticError, ValueError, TypeError):  # 1 // 0, 2.0 ** 10**300, 1 << -1, 1.0 << 2
            return None
        return result if is_number(result) and fits(result) else None  # (-8) ** 0.5 is complex
    if kind is ast.Add and isinstance(left, (str, bytes)) and type(left) is type(right):
        return left + right if len(left) + len(right) <= MAX_TEXT else None
    if kind is ast.Mult:
        text, count = (left, right) if type(right) is int else (right, left)
        if isinstance(text, (str, bytes)) and type(count) is int:
            return text * count if count <= 0 or len(text) * count <= MAX_TEXT else None
    return None


def _small_result(kind: type, left, right) -> bool:
    """Can `left kind right` on numbers be computed cheaply, its result within MAX_INT_BITS (or nearly: `fold`
    checks the result itself)? Only `*`, `**` and `<<` on ints grow a number faster than by a bit."""
    if not (type(left) is int and type(right) is int):
        return True  # a float result: Python raises OverflowError or gives inf at once
    if kind is ast.Mult:
        return not left or not right or left.bit_length() + right.bit_length() - 1 <= MAX_INT_BITS
    if kind is ast.Pow:
        if right < 0 or abs(left) <= 1:
            return True  # a float (quick at any size), or 0, 1, -1
        return (abs(left).bit_length() - 1) * right < MAX_INT_BITS  # the result has more bits than that
    if kind is ast.LShift:
        return not left or right < 0 or left.bit_length() + right <= MAX_INT_BITS
    return True


def binop(op: ast.operator, left: Value, right: Value) -> Value:
    """`left op right` on folded values: numbers and strings (`fold`), sequences joined (`a + b`) and
    repeated (`[x] * n`, `(1,) * n`); UNKNOWN for anything else, or anything over the bounds."""
    if isinstance(op, ast.Add) and isinstance(left, Seq) and isinstance(right, Seq):
        return sequence(left.items + right.items)
    if isinstance(op, ast.Mult) and (isinstance(left, Seq) or isinstance(right, Seq)):
        seq, count = (left, right) if isinstance(left, Seq) else (right, left)
        if not (isinstance(count, Const) and type(count.value) is int):
            return UNKNOWN
        if count.value <= 0:
            return Seq(())
        held = size(seq)
        if held is None or (held - 1) * count.value > MAX_ITEMS:
            return UNKNOWN
        return Seq(seq.items * count.value)
    if isinstance(left, Const) and isinstance(right, Const):
        result = fold(op, left.value, right.value)
        return UNKNOWN if result is None else Const(result)
    return UNKNOWN


def sequence(items: tuple[Value, ...]) -> Value:
    """Seq(items), or UNKNOWN where it would hold more than MAX_ITEMS values."""
    seq = Seq(items)
    return seq if size(seq) is not None else UNKNOWN


# The values that hold other values: a name can repeat one in the next (`b = (a, a)`, `c = (b, b)`), so
# forty lines make a tuple of 2**40 values, which hashing or comparing it walks in full.
HOLDERS = (Seq, Mapping, OneOf, Instance, Partial, Spec)


def size(value: Value, budget: int = MAX_ITEMS) -> int | None:
    """How many values `value` is made of (itself and those it holds, nested ones counted), or None when
    more than `budget + 1`: stops there, so it costs at most that many steps whatever the value holds."""
    count = 0
    stack = [value]
    while stack:
        count += 1
        if count > budget + 1:
            return None
        item = stack.pop()
        kind = type(item)
        if kind is Seq:
            stack.extend(item.items)
        elif kind is Mapping:
            stack.extend(held for _, held in item.items)
        elif kind is OneOf:
            stack.extend(item.options)
        elif kind is Instance:
            stack.extend((*item.args, *(held for _, held in item.kwargs)))
        elif kind is Partial:
            stack.extend((item.func, *item.args, *(held for _, held in item.kwargs)))
        elif kind is Spec:
            stack.extend(held for _, held in item.fields)
    return count


def bounded(value: Value) -> Value:
    """The value, or UNKNOWN where it holds more than MAX_ITEMS values."""
    return value if type(value) not in HOLDERS or size(value) is not None else UNKNOWN


def product(numbers) -> int | None:
    """`math.prod(numbers)` (ints), or None where it would exceed MAX_INT_BITS (a shape's element count)."""
    total = 1
    for number in numbers:
        if total and number and total.bit_length() + number.bit_length() - 1 > MAX_INT_BITS:
            return None
        total *= number
    return total if total.bit_length() <= MAX_INT_BITS else None


def range_length(bounds: list[int]) -> int | None:
    """`len(range(*bounds))` at any size (`len` raises OverflowError past 2**63), or None where `range`
    raises (a zero step, more than three bounds)."""
    if not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and not bounds[2]):
        return None
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1)
    return max(0, -((start - stop) // step))  # ceil((stop - start) / step)
