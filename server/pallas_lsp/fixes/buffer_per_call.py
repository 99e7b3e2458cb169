"""Fix (PAL001/PAL002): a helper nested in the body, called more than once, whose get_global buffer each call
returns, gets a scratch buffer per call.

    def body(res_ref, upd_ref, o_ref):                      def body(res_ref, upd_ref, o_ref, res_buf, upd_buf):
      def widened(src_ref):                                   def widened(src_ref, buf):
        buf = pl.get_global(plgpu.SMEM((block,), f32))  ->      buf[...] = src_ref[cols].astype(f32)
        buf[...] = src_ref[cols].astype(f32)                    return buf
        return buf
      res = widened(res_ref)                                  res = widened(res_ref, res_buf)
      upd = widened(upd_ref)                                  upd = widened(upd_ref, upd_buf)

    plgpu.kernel(body, ...)                             ->    plgpu.kernel(body, ..., scratch_types=[plgpu.SMEM((block,), f32),
                                                                                                     plgpu.SMEM((block,), f32)])

Each trace of `pl.get_global` is a buffer of its own, and here each call's buffer outlives the call (`res` and
`upd` are both read after the second call): one scratch buffer would make them one (traced_once refuses that).
One scratch buffer per call keeps them apart, as they were. Only for `name = pl.get_global(T)` in the helper's
own body, the helper a `def` of the launched body's own block, named only by 2 to 4 direct calls in the body (no
loop around them), a launch of this module whose scratch is a list (or none), and `T` written the same there.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS, TPU_TC, compiled_backend, site_interpreter
from ..analysis.values import MemType
from .allocate_as_scratch import _before_keyword_bound
from .cst_locate import expression
from .grid_spec import grid_spec_site
from .kernel_edits import (CannotFix, FixBuilder, add_parameter, appended, check_parameters, edit_sequence_keyword,
                           remove_statement)
from .sites import single_body_launches
from .traced_once import _outlives, in_loop
from .type_in_scope import type_at_launches

_MOST_CALLS = 4


def _calls(model, helper: ast.FunctionDef, body: ast.FunctionDef) -> list[ast.Call] | None:
    """The helper's direct calls in the body (none in a loop), where every mention of its name is one."""
    mentions = [n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == helper.name]
    calls = []
    for name in mentions:
        call = model.parents.get(name)
        if not (isinstance(call, ast.Call) and call.func is name) or in_loop(model, call, body) \
                or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        calls.append(call)
    return calls


def _names(model, calls: list[ast.Call], name: str) -> list[str]:
    """A parameter name per call: `<target>_<name>` where the call's result is assigned to a name, else `<name><n>`."""
    taken = {n.id for n in ast.walk(model.tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(model.tree) if isinstance(a, ast.arg)}
    chosen = []
    for n, call in enumerate(calls):
        statement = model.parents.get(call)
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        candidate = f"{target.id}_{name}" if isinstance(target, ast.Name) else f"{name}{n + 1}"
        while candidate in taken or candidate in chosen:
            candidate += "_"
        chosen.append(candidate)
    return chosen


def _scratch_taken(project, entries, value: MemType) -> str:
    """The scratch keyword of the launches, where each takes this type as scratch (compiled Mosaic GPU for GPU
    memory; a TPU kernel, compiled or under the TPU interpreter, for TPU memory)."""
    if len({e.api for e in entries}) != 1:
        raise CannotFix("the body is launched by different factories")
    api = entries[0].api
    if value.constructor.startswith("plgpu.") and value.space in ("smem", "tmem", "regs"):
        if api != "plgpu.kernel" or any(e.interpret or e.maybe_interpret for e in entries):
            raise CannotFix("a Mosaic GPU buffer, in a launch that is no compiled plgpu.kernel")
    elif value.constructor in ("pltpu.VMEM", "pltpu.SMEM"):
        if api != "pl.pallas_call" or any(compiled_backend(project, e) != TPU_TC for e in entries) or any(
                site_interpreter(project, e, site) != "tpu" for e in entries for site in [*e.interpret,
                                                                                         *e.maybe_interpret]):
            raise CannotFix("a TPU buffer, in a launch that is no TPU pallas_call (compiled or under the TPU "
                            "interpreter)")
        if any(grid_spec_site(project, e) is not None for e in entries):
            raise CannotFix("the launch takes its scratch in a grid spec")
    else:
        raise CannotFix("a buffer of a kind this fix does not allocate per call")
    keyword = SCRATCH_KEYWORDS[api].keyword
    for entry in entries:
        found = entry.kernel.kwarg(keyword)
        written = found[1] if found else None
        if found and (written is None or isinstance(written, ast.Dict) or (
                isinstance(written, ast.Call) and ast.unparse(written.func) == "dict")):
            raise CannotFix("the launch's scratch is a dict, or not written at the launch")
    return keyword


def fix(project, model, call, value, code: str):
    if code not in ("PAL001", "PAL002") or not isinstance(value, MemType) or not (
            value.constructor in ("pltpu.VMEM", "pltpu.SMEM")
            or value.constructor.startswith("plgpu.") and value.space in ("smem", "tmem", "regs")):
        return None  # a semaphore, a barrier or global memory: not a staging buffer this fix gives per call
    helper = model.enclosing_function(call)
    statement = model.parents.get(call)
    body = model.enclosing_function(helper) if isinstance(helper, ast.FunctionDef) else None
    if not (isinstance(body, ast.FunctionDef) and helper in body.body and isinstance(statement, ast.Assign)
            and statement in helper.body and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and len(call.args) == 1 and not call.keywords):
        return None
    name = statement.targets[0].id
    reads = [n for n in ast.walk(helper) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    if not any(_outlives(model.parents, n) for n in reads):
        return None  # one buffer used by the calls in turn is what they did: the scratch fix gives one
    calls = _calls(model, helper, body)
    if not calls or not 2 <= len(calls) <= _MOST_CALLS:
        return None
    check_parameters(helper)
    check_parameters(body)
    if len(model.scopes[helper].bindings.get(name, [])) != 1 or in_loop(model, call, helper):
        raise CannotFix(f"{name} is bound again in {helper.name}, or asked for in a loop")
    entries = single_body_launches(project, model, body)
    if not entries or any(e.model is not model or not isinstance(e.node, ast.Call) for e in entries):
        raise CannotFix("the body is not launched by calls of this module")
    keyword = _scratch_taken(project, entries, value)
    typed = type_at_launches(project, model, call.args[0], entries)
    if typed is None:
        raise CannotFix("the buffer type cannot be written at the launch")
    names = _names(model, calls, name)
    by_keyword = bool(helper.args.defaults or helper.args.kwonlyargs) or any(c.keywords for c in calls)
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    remove_statement(builder, model, statement)
    add_parameter(builder, model, helper, name, None)
    for site, given in zip(calls, names):
        target = file.find_ast(model, site, cst.Call)
        if target is None:
            raise CannotFix("a call of the helper was not found")
        argument = cst.Arg(expression(given), keyword=cst.Name(name) if by_keyword else None,
                           equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                 whitespace_after=cst.SimpleWhitespace(""))
                           if by_keyword else cst.MaybeSentinel.DEFAULT)
        file.rewrite(target, lambda updated, argument=argument: updated.with_changes(
            args=appended(list(updated.args), argument)))
    at = _before_keyword_bound(body, entries)
    for offset, given in enumerate(names):
        add_parameter(builder, model, body, given, None if at is None else at + offset)
    for entry in entries:
        found = entry.kernel.kwarg(keyword)
        if found is None:  # `scratch_types=[T, T]`
            edit_sequence_keyword(builder, entry, keyword, ", ".join([typed] * len(names)), first=False,
                                  add_if_missing=True)
        elif isinstance(found[1], (ast.List, ast.Tuple)):  # each appended to the display, in turn
            for _ in names:
                edit_sequence_keyword(builder, entry, keyword, typed, first=False)
        else:
            raise CannotFix("the launch's scratch is not written as a list at the launch")
    return builder.fix(f"pallas-lsp ({code}): Allocate {name} as scratch once per call of {helper.name} "
                       f"({', '.join(names)})", "safe", preferred=True)
