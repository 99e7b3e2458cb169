"""What to trace and with which abstract arguments; pure (no jax, nothing executed).

Arguments are written like `f32[128,128], i32[8]` and come, in this order, from `--args`, a
`# pallas-lsp: trace(...)` comment directly above the function, its jaxtyping annotations
(`Float[Array, "128 128"]`), or a call of the function in the same file whose arguments have
static shapes. When none gives them, `ArgsNotFound` says exactly what is missing.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from ..analysis.arithmetic import fits, fold
from ..dtypes import LONG_NAMES, DTYPES, short_dtype
from ..source_text import split_lines

# jaxtyping dtype annotations that fix one dtype (the generic ones take jax's default).
JAXTYPING_DTYPES = {
    "Float": "float32", "Float16": "float16", "BFloat16": "bfloat16", "Float32": "float32", "Float64": "float64",
    "Int": "int32", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
    "UInt": "uint32", "UInt8": "uint8", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64",
    "Bool": "bool", "Complex": "complex64", "Complex64": "complex64", "Complex128": "complex128",
}
_JAXTYPING_OPEN = {"Shaped", "Num", "Real", "Inexact", "Integer", "Key"}

DIRECTIVE = re.compile(r"#\s*pallas-lsp:\s*trace\s*\((?P<args>.*)\)\s*$")
_SPEC = re.compile(r"\s*(?P<dtype>[A-Za-z_][A-Za-z0-9_]*)\s*\[(?P<dims>[^\]]*)\]\s*")


class ArgSpecError(ValueError):
    """An argument list that does not parse; the message says where and what is expected."""


class ArgsNotFound(LookupError):
    """No source gave the arguments; the message lists what each source lacked."""


class TargetNotFound(LookupError):
    pass


@dataclass(frozen=True)
class ArgSpec:
    """An abstract array argument (traced); `keyword`: passed by that name."""

    dtype: str  # numpy name, e.g. "float32"
    shape: tuple[int, ...]
    keyword: str | None = None

    def __str__(self) -> str:
        return (f"{self.keyword}=" if self.keyword else "") + f"{short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"

    def to_json(self) -> dict:
        return {"dtype": self.dtype, "shape": list(self.shape), **({"keyword": self.keyword} if self.keyword else {})}


@dataclass(frozen=True)
class StaticArg:
    """A Python value a call passes as it is (`2.0`, `block=64`, `dtype=jnp.bfloat16`): bound, never traced,
    as the call binds it. `dtype`: the value is `jnp.<dtype>`."""

    value: int | float | str | bool | None
    keyword: str | None = None
    dtype: bool = False

    def __str__(self) -> str:
        return (f"{self.keyword}=" if self.keyword else "") + (f"jnp.{self.value}" if self.dtype else repr(self.value))

    def to_json(self) -> dict:
        return {("static_dtype" if self.dtype else "static"): self.value,
                **({"keyword": self.keyword} if self.keyword else {})}


@dataclass(frozen=True)
class TargetArgs:
    specs: tuple[ArgSpec | StaticArg, ...]
    source: str  # "--args", "comment on line N", "annotations", "call on line N"

    def __str__(self) -> str:
        return ", ".join(map(str, self.specs))


def dtype_name(text: str) -> str | None:
    text = text.strip()
    if text in DTYPES:
        return DTYPES[text]
    if text in LONG_NAMES:
        return text
    return None


def parse_args(text: str) -> tuple[ArgSpec, ...]:
    """`f32[128,128], i32[8]` -> specs. Scalars are `f32[]`."""
    specs: list[ArgSpec] = []
    rest = text.strip()
    if not rest:
        return ()
    position = 0
    while position < len(text):
        match = _SPEC.match(text, position)
        if match is None:
            snippet = text[position:].strip()[:30]
            raise ArgSpecError(f"cannot read argument {len(specs) + 1} ({snippet!r}): "
                               "write DTYPE[DIM,...], e.g. f32[128,128] or i32[] for a scalar")
        dtype = dtype_name(match["dtype"])
        if dtype is None:
            raise ArgSpecError(f"unknown dtype {match['dtype']!r} in argument {len(specs) + 1}; "
                               f"use one of {', '.join(DTYPES)}")
        dims = [d.strip() for d in match["dims"].split(",") if d.strip()]
        for d in dims:
            if not d.isdigit():
                raise ArgSpecError(f"dimension {d!r} of argument {len(specs) + 1} is not a whole number")
        specs.append(ArgSpec(dtype, tuple(int(d) for d in dims)))
        position = match.end()
        if position < len(text):
            if text[position] != ",":
                raise ArgSpecError(f"expected ',' after argument {len(specs)} at {text[position:][:20]!r}")
            position += 1
            if not text[position:].strip():
                break
    return tuple(specs)


def split_target(target: str) -> tuple[str, str | int]:
    """`path/to/file.py::function` -> (path, function); `path/to/file.py:12` -> (path, 11), the 0-based line."""
    path, sep, function = target.rpartition("::")
    if sep and path and function:
        return path, function
    path, sep, line = target.rpartition(":")
    if sep and path and line.isdigit() and int(line) >= 1:
        return path, int(line) - 1
    raise ArgSpecError(f"expected PATH::FUNCTION or PATH:LINE (LINE from 1), got {target!r}")


# ---- finding the target in the source ---------------------------------------------------------------

def find_definition(tree: ast.Module, function: str) -> ast.stmt | None:
    """The module-level `def` or assignment that binds `function` (last one wins, like Python)."""
    found = None
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == function:
            found = stmt
        elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == function for t in stmt.targets):
            found = stmt
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == function:
            found = stmt
    return found


def _bound_names(tree: ast.Module) -> list[str]:
    """The names module-level `def`s and assignments bind, in the order of the file."""
    names: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.extend(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.append(stmt.target.id)
    return list(dict.fromkeys(names))


def unknown_name(source: str, function: str) -> str | None:
    """Why `PATH::function` names nothing the file has (a typo: a usage error, never a trace that
    JAX failed), with the name meant when one is close; None when the file binds it (or a dotted
    path is asked for, which only the traced module can answer)."""
    if "." in function:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    if find_definition(tree, function) is not None:
        return None
    names = _bound_names(tree)
    close = difflib.get_close_matches(function, names, 1)
    functions = [stmt.name for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))]
    listed = ", ".join(functions[:12]) + (", ..." if len(functions) > 12 else "")
    return (f"no module-level function or assignment named {function!r}"
            + (f" (did you mean {close[0]}?)" if close else "")
            + (f"; its functions: {listed}" if functions else ""))


def definition_line(stmt: ast.stmt) -> int:
    """0-based line of the statement's first decorator or keyword line."""
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno, *(d.lineno for d in decorators)]) - 1


def resolve_args(source: str, function: str, explicit: str | None = None) -> TargetArgs:
    if explicit is not None:
        return TargetArgs(parse_args(explicit), "--args")
    tree = ast.parse(source)
    if "." in function:
        raise ArgsNotFound(f"give the arguments of {function} with --args (only module-level functions "
                           "are searched for a comment, annotations or a call)")
    stmt = find_definition(tree, function)
    if stmt is None:
        raise TargetNotFound(f"no module-level function or assignment named {function!r}")
    lines = split_lines(source)
    reasons: list[str] = []

    directive = _directive_above(lines, definition_line(stmt))
    if directive is not None:
        text, line = directive
        try:
            return TargetArgs(parse_args(text), f"comment on line {line + 1}")
        except ArgSpecError as exc:
            raise ArgSpecError(f"line {line + 1}: {exc}") from None
    reasons.append(f"no '# pallas-lsp: trace({example_args(source, function)})' comment directly above line "
                   f"{definition_line(stmt) + 1}")

    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = _required_params(stmt)
        if not params:
            return TargetArgs((), "no parameters")
        specs, why = _annotated_specs(params)
        if specs is not None:
            return TargetArgs(specs, "annotations")
        reasons.append(why)
    else:
        reasons.append(f"{function} is assigned, not defined with def, so it has no annotations")

    found, call_reasons = _call_specs(tree, function)
    if found is not None:
        return found
    reasons.extend(call_reasons or [f"no call of {function}(...) in this file"])
    raise ArgsNotFound(f"no arguments to trace {function} with: " + "; ".join(reasons))


def suggest_args(source: str, function: str) -> str | None:
    """A first guess for a form that asks for the arguments: the module-level
    `jax.ShapeDtypeStruct`s (and other static arrays), as many as `function` takes when it is a
    `def`. None when the file has none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    static = _Static(tree)
    specs = [spec for name, value in static.module_values.items()
             if isinstance(value, ast.Call) and (spec := static.spec(value, {})) is not None]
    stmt = find_definition(tree, function)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        wanted = len(_required_params(stmt))
        if wanted and len(specs) >= wanted:
            specs = specs[:wanted]
    return ", ".join(map(str, specs)) or None


def example_args(source: str, function: str) -> str:
    """Arguments to show in advice: the file's own shapes (`suggest_args`), else one placeholder
    array per parameter the function takes."""
    suggested = suggest_args(source, function)
    if suggested:
        return suggested
    try:
        stmt = find_definition(ast.parse(source), function)
    except (SyntaxError, ValueError):
        stmt = None
    count = len(_required_params(stmt)) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else 1
    return ", ".join(["f32[128,128]"] * max(count, 1))


def _directive_above(lines: list[str], line: int) -> tuple[str, int] | None:
    index = line - 1
    while index >= 0 and lines[index].strip().startswith("#"):
        match = DIRECTIVE.search(lines[index].strip())
        if match:
            return match["args"], index
        index -= 1
    return None


def _required_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    required = positional[: len(positional) - len(args.defaults)]
    if required and required[0].arg in ("self", "cls"):
        required = required[1:]
    return required


def _annotated_specs(params: list[ast.arg]) -> tuple[tuple[ArgSpec, ...] | None, str]:
    specs = []
    for param in params:
        if param.annotation is None:
            return None, f"parameter {param.arg!r} has no annotation"
        spec, why = _jaxtyping_spec(param.annotation)
        if spec is None:
            return None, f"the annotation of parameter {param.arg!r} {why}"
        specs.append(spec)
    return tuple(specs), ""


def _jaxtyping_spec(annotation: ast.expr) -> tuple[ArgSpec | None, str]:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None, "is a string that does not parse"
    if not (isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple)
            and len(annotation.slice.elts) == 2):
        return None, "is not a jaxtyping annotation like Float[Array, \"128 128\"]"
    kind = _last_name(annotation.value)
    dims = annotation.slice.elts[1]
    if kind in _JAXTYPING_OPEN:
        return None, f"({kind}[...]) does not fix a dtype"
    dtype = JAXTYPING_DTYPES.get(kind or "")
    if dtype is None:
        return None, f"uses {kind or ast.unparse(annotation.value)}, not a jaxtyping dtype"
    if not (isinstance(dims, ast.Constant) and isinstance(dims.value, str)):
        return None, "has a shape that is not a string"
    shape = []
    for dim in dims.value.split():
        if not dim.isdigit():
            return None, f"has the symbolic dimension {dim!r}"
        shape.append(int(dim))
    return ArgSpec(dtype, tuple(shape)), ""


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


# ---- arguments from a call in the same file ---------------------------------------------------------

_ARRAY_MAKERS = {"zeros", "ones", "empty", "full", "zeros_like"}
_NUMPY_MODULES = {"np", "numpy", "onp"}


class _Static:
    """Evaluates the few expressions that give a static shape: literals, module constants,
    `jax.ShapeDtypeStruct(shape, dtype)`, `jnp.zeros/ones/empty/full(shape, dtype)`,
    `jax.random.normal/uniform(key, shape, dtype)`, `jnp.arange(n)`."""

    def __init__(self, tree: ast.Module):
        self.module_values: dict[str, ast.expr] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self.module_values[stmt.targets[0].id] = stmt.value
            elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)
                  and isinstance(stmt.value, ast.Tuple) and len(stmt.targets[0].elts) == len(stmt.value.elts)):
                for target, value in zip(stmt.targets[0].elts, stmt.value.elts):  # ROWS, COLS = 4, 128
                    if isinstance(target, ast.Name):
                        self.module_values[target.id] = value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                self.module_values[stmt.target.id] = stmt.value

    def lookup(self, name: str, local: dict[str, ast.expr], depth: int) -> ast.expr | None:
        if depth > 20:
            return None
        return local.get(name, self.module_values.get(name))

    def integer(self, node: ast.expr, local, depth=0) -> int | None:
        """An int the expression folds to, within the analysis' bounds (`10 ** 10 ** 10` is None, never computed)."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value if fits(node.value) else None
        if isinstance(node, ast.Name):
            value = self.lookup(node.id, local, depth)
            return None if value is None else self.integer(value, local, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)):
            left, right = self.integer(node.left, local, depth + 1), self.integer(node.right, local, depth + 1)
            if left is None or right is None:
                return None
            result = fold(node.op, left, right)  # None for 1 // 0 or a result over the bounds
            return result if type(result) is int else None
        return None

    def shape(self, node: ast.expr, local, depth=0) -> tuple[int, ...] | None:
        if isinstance(node, ast.Name):
            value = self.lookup(node.id, local, depth)
            return None if value is None else self.shape(value, local, depth + 1)
        if isinstance(node, (ast.Tuple, ast.List)):
            dims = [self.integer(e, local, depth + 1) for e in node.elts]
            return None if any(d is None for d in dims) else tuple(dims)  # type: ignore[misc]
        single = self.integer(node, local, depth + 1)
        return None if single is None else (single,)

    def dtype(self, node: ast.expr | None, default: str, local, depth=0) -> str | None:
        if node is None:
            return default
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return dtype_name(node.value)
        if isinstance(node, ast.Attribute):
            return dtype_name(node.attr)
        if isinstance(node, ast.Name):
            if dtype_name(node.id):
                return dtype_name(node.id)
            value = self.lookup(node.id, local, depth)
            return None if value is None else self.dtype(value, default, local, depth + 1)
        return None

    def spec(self, node: ast.expr, local, depth=0) -> ArgSpec | None:
        if isinstance(node, ast.Name):
            value = self.lookup(node.id, local, depth)
            return None if value is None else self.spec(value, local, depth + 1)
        if not isinstance(node, ast.Call):
            return None
        name = _last_name(node.func)
        owner = _last_name(node.func.value) if isinstance(node.func, ast.Attribute) else None
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        args = node.args
        if name == "ShapeDtypeStruct":
            shape_node = args[0] if args else keywords.get("shape")
            dtype_node = args[1] if len(args) > 1 else keywords.get("dtype")
            if shape_node is None or dtype_node is None:
                return None
            default = None
        elif name in _ARRAY_MAKERS and name != "zeros_like":
            shape_node = args[0] if args else keywords.get("shape")
            dtype_index = 2 if name == "full" else 1
            dtype_node = args[dtype_index] if len(args) > dtype_index else keywords.get("dtype")
            default = "float64" if owner in _NUMPY_MODULES else "float32"
        elif name in ("normal", "uniform") and owner == "random":
            shape_node = args[1] if len(args) > 1 else keywords.get("shape")
            dtype_node = args[2] if len(args) > 2 else keywords.get("dtype")
            default = "float32"
        elif name == "arange" and len(args) == 1 and not keywords:
            n = self.integer(args[0], local, depth + 1)
            return None if n is None else ArgSpec("int64" if owner in _NUMPY_MODULES else "int32", (n,))
        else:
            return None
        if shape_node is None:
            return None
        shape = self.shape(shape_node, local, depth + 1)
        dtype = self.dtype(dtype_node, default or "", local, depth + 1)
        if shape is None or not dtype:
            return None
        return ArgSpec(dtype, shape)


def _call_specs(tree: ast.Module, function: str) -> tuple[TargetArgs | None, list[str]]:
    static = _Static(tree)
    reasons: list[str] = []
    for scope, call in _calls_of(tree, function):
        local = _local_values(scope, call.lineno) if scope is not None else {}
        if call.keywords:
            reasons.append(f"the call on line {call.lineno} passes keyword arguments")
            continue
        specs = []
        for index, arg in enumerate(call.args):
            spec = static.spec(arg, local)
            if spec is None:
                reasons.append(f"argument {index + 1} of the call on line {call.lineno} "
                               f"({ast.unparse(arg)[:40]}) has no static shape")
                break
            specs.append(spec)
        else:
            return TargetArgs(tuple(specs), f"call on line {call.lineno}"), reasons
    return None, reasons


def _calls_of(tree: ast.Module, function: str):
    """Calls `function(...)` and `jax.jit(function)(...)`, with their enclosing function (or None)."""
    def visit(node: ast.AST, scope):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
            if isinstance(child, ast.Call):
                target = child.func
                if (isinstance(target, ast.Call) and _last_name(target.func) == "jit" and target.args):
                    target = target.args[0]
                if isinstance(target, ast.Name) and target.id == function:
                    yield scope, child
            yield from visit(child, inner)
    yield from visit(tree, None)


def _local_values(func: ast.AST, before_line: int) -> dict[str, ast.expr]:
    assigns = [node for node in ast.walk(func)
               if isinstance(node, ast.Assign) and node.lineno < before_line and len(node.targets) == 1
               and isinstance(node.targets[0], ast.Name)]
    return {node.targets[0].id: node.value for node in sorted(assigns, key=lambda n: n.lineno)}


def function_at(source: str, line: int) -> str | None:
    """The module-level function or assignment whose lines (decorators and the comment above
    included) hold 0-based `line`: what a position in the editor asks to trace."""
    tree = ast.parse(source)
    lines = split_lines(source)
    for stmt in tree.body:
        names = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [stmt.name]
        elif isinstance(stmt, ast.Assign):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names = [stmt.target.id]
        if not names:
            continue
        first = definition_line(stmt)
        directive = _directive_above(lines, first)
        if directive is not None:
            first = directive[1]
        if first <= line <= (stmt.end_lineno or stmt.lineno) - 1:
            return names[0]
    return None
