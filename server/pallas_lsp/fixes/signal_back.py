"""Fix (PAL009): a non-decrementing wait under the TPU interpreter becomes a wait, then a signal of the count back.

    pl.semaphore_wait(sem, 1, decrement=False)   ->   pl.semaphore_wait(sem, 1)
                                                      pl.semaphore_signal(sem, 1)

The TPU interpreter implements only waits that decrement (jax 0.12: "NotImplementedError: Non-decrementing
wait is not supported."). Waiting for the value and signalling it back leaves the count where the wait found
it, as `decrement=False` does, but not atomically: in between, another waiter on the same semaphore sees the
count dropped by the value. So the fix is unsafe (applied only with `--unsafe-fixes`). The value and the
semaphore are each evaluated once: an expression that is not a name, a number or a view of a name
(`sem.at[0]`) is first bound to a new name.

Offered where every kernel that runs the wait runs it otherwise than written: the TPU interpreter, which
refuses it, and the TPU compiler, which lowers it as a wait that decrements (jax 0.12: the same `tpu.sem_wait`
as for `decrement=True`). There the rewrite gives the wait the meaning its source asks for; compiled, it
changes what runs, and the title says so. Where only compiled kernels run the wait, JAX accepts the kernel:
the fix is then display-only (the editor offers it; `--fix --unsafe-fixes` leaves a kernel JAX accepts as it is). Mosaic GPU and `interpret=True` run `decrement=False` as written,
atomically: where one of them also runs the wait, the rewrite is not offered.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SC_SCALAR, SC_VECTOR, TPU_TC
from .kernel_edits import CannotFix, FixBuilder, unique_name

TPU = (TPU_TC, SC_VECTOR, SC_SCALAR)

TITLE = ("Wait, then signal the count back (unsafe: between the wait and the signal another waiter on this "
         "semaphore sees the count drop)")
# Compiled for a TPU, the wait decremented the count: with the signal back it leaves it, as decrement=False asks.
COMPILED_TITLE = ("Wait, then signal the count back, as decrement=False asks (unsafe: compiled for a TPU, this wait "
                  "consumed the count and now leaves it; between the wait and the signal another waiter on this "
                  "semaphore sees it drop)")
UNCHECKED = ("compiled for a SparseCore, what JAX makes of decrement=False was not checked: the rewrite might change "
             "what the compiled kernel does")
AS_WRITTEN = ("a kernel that runs decrement=False as written (Mosaic GPU, interpret=True) also runs this wait: "
              "there, waiting and signalling back would let another waiter see the count drop")


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _once(node: ast.expr) -> bool:
    """Is evaluating `node` twice the same as evaluating it once: a name, a number, or a name's view `s.at[i]`?"""
    if isinstance(node, ast.Name) or (isinstance(node, ast.Constant) and isinstance(node.value, int)):
        return True
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "at"
            and _once(node.value.value) and all(_once(e) for e in (
                node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice])))


def fix(project, model, finding):
    facts = finding.facts
    call, kernels = facts.get("wait"), facts.get("kernels", ())
    if call is None or facts.get("model") is not model or not kernels:
        return None
    compiled = [k for k in kernels if k.interpreter is None]
    if any(k.interpreter not in (None, "tpu") for k in kernels) or any(k.backend not in TPU for k in compiled):
        raise CannotFix(AS_WRITTEN)
    if any(k.backend != TPU_TC for k in compiled):
        raise CannotFix(UNCHECKED)
    statement = model.parents.get(call)
    function = model.enclosing_function(call)
    if not isinstance(statement, ast.Expr) or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise CannotFix("the wait is not a statement of its own in a function")
    if (any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
            or len(call.args) > 2):
        raise CannotFix("the wait's arguments are not a semaphore and a value (*args, **kwargs)")
    sem, value = _argument(call, 0, "sem_or_view"), _argument(call, 1, "value")
    if sem is None:
        raise CannotFix("the wait names no semaphore")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    small = file.find_ast(model, statement, cst.BaseSmallStatement)
    line = file.parent(small) if small is not None else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        raise CannotFix("the wait shares its line with another statement")
    named, codes, renamed = [], {}, {}  # renamed: role -> the new name its expression is bound to
    for node, role, wanted in ((sem, "sem_or_view", "sem_view"), (value, "value", "count")):
        if node is None:
            continue
        codes[role] = ast.get_source_segment(model.text, node)
        if not _once(node):
            renamed[role] = unique_name(model, function, wanted)
            named.append(cst.parse_statement(f"{renamed[role]} = {codes[role]}\n"))
            codes[role] = renamed[role]
    signal = (imports.local.get("jax.experimental.pallas.semaphore_signal")
              or f"{imports.name('jax.experimental.pallas')}.semaphore_signal")
    count = f", {codes['value']}" if "value" in codes else ""
    signal_line = cst.parse_statement(f"{signal}({codes['sem_or_view']}{count})\n")

    def rewrite(updated: cst.SimpleStatementLine):
        wait = updated.body[0].value
        args = []
        for position, arg in enumerate(wait.args):
            role = arg.keyword.value if arg.keyword is not None else ("sem_or_view", "value")[position]
            if role == "decrement":
                continue
            args.append(arg.with_changes(value=cst.Name(renamed[role])) if role in renamed else arg)
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        waited = updated.with_changes(body=[updated.body[0].with_changes(value=wait.with_changes(args=args))])
        if named:  # the line's comments stay above it, now above the names bound first
            waited = waited.with_changes(leading_lines=[])
            return cst.FlattenSentinel([named[0].with_changes(leading_lines=updated.leading_lines), *named[1:],
                                        waited, signal_line])
        return cst.FlattenSentinel([waited, signal_line])

    file.rewrite(line, rewrite)
    # Where only compiled kernels run it, JAX accepts the wait: the editor offers the rewrite, fix-all leaves it.
    applicability = "display_only" if len(compiled) == len(kernels) else "unsafe"
    return builder.fix(f"pallas-lsp ({finding.code}): {COMPILED_TITLE if compiled else TITLE}", applicability)
