"""Fix: a decorator whose wrapper hands the body a `get_global` buffer gives way to the launch's scratch.

    def with_staging(width):                                   def make(cfg):
        def decorate(body):                                        def body(x_ref, o_ref, staging):
            @functools.wraps(body)                                      ...
            def wrapped(*refs):                        ->          return plgpu.kernel(
                return body(*refs, pl.get_global(T))                   body, ..., scratch_types=[plgpu.SMEM((cfg.n,), f32)])
            return wrapped
        return decorate

    def make(cfg):
        @with_staging(cfg.n)
        def body(x_ref, o_ref, staging): ...
        return plgpu.kernel(body, ...)

The wrapper runs in the kernel and asks `get_global` for a buffer (jax 0.12: "get_global only supports
semaphores"), which it passes after the refs JAX gives: the launch's scratch is passed there too. So the decorator
comes off the launched body, and the launch takes the type as scratch, its decorator parameters written as the
decorator's application passes them (`width` as `cfg.n`; a factory `lambda: T` as `T`). Only where the wrapper
does nothing else (`return body(*refs, pl.get_global(T))`, or the buffer named first), the body is named only
where it is launched, and each name of the type means the same at the launch.
"""

from __future__ import annotations

import ast

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from .kernel_edits import CannotFix, FixBuilder, edit_sequence_keyword
from .sites import is_call_form, launches
from .default_argument_scratch import is_semaphore
from .type_in_scope import _plain, _substituted


def _wrapper_form(model, call: ast.Call):
    """(wrapper, decorate) where the get_global is the buffer `wrapped(*refs)` appends to the refs it hands the
    decorated function, `decorate(body)`'s parameter, and `decorate` returns `wrapped`; None otherwise."""
    wrapper = model.enclosing_function(call)
    decorate = model.enclosing_function(wrapper) if isinstance(wrapper, ast.FunctionDef) else None
    if not isinstance(decorate, ast.FunctionDef) or wrapper not in decorate.body:
        return None
    spec, outer = wrapper.args, decorate.args
    if spec.vararg is None or spec.args or spec.posonlyargs or spec.kwonlyargs or spec.kwarg \
            or len(outer.args) != 1 or outer.vararg or outer.kwonlyargs or outer.kwarg or outer.posonlyargs:
        return None
    last = decorate.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == wrapper.name):
        return None
    body = [s for s in wrapper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    named = None
    if len(body) == 2 and isinstance(body[0], ast.Assign) and body[0].value is call and len(body[0].targets) == 1 \
            and isinstance(body[0].targets[0], ast.Name):
        named = body[0].targets[0].id
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return None
    handed = body[0].value
    refs = handed.args[0] if len(handed.args) == 2 else None
    passed = handed.args[1] if len(handed.args) == 2 else None
    if handed.keywords or not (isinstance(handed.func, ast.Name) and handed.func.id == outer.args[0].arg) \
            or not (isinstance(refs, ast.Starred) and isinstance(refs.value, ast.Name) and refs.value.id == spec.vararg.arg) \
            or not (passed is call or isinstance(passed, ast.Name) and passed.id == named):
        return None
    return wrapper, decorate


def fix(project, model, call: ast.Call, value, code: str):
    found = _wrapper_form(model, call)
    if found is None:
        return None
    wrapper, decorate = found
    if is_semaphore(value):
        raise CannotFix("the wrapper hands on a semaphore, which is no scratch buffer")
    factory = model.enclosing_function(decorate)
    if factory is not None and (not isinstance(factory, ast.FunctionDef) or model.enclosing_function(factory)
                                or factory.body[-1:] == [] or not _returns(factory, decorate.name)):
        raise CannotFix("the decorator is not a module-level function returning the decorating function")
    argument = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if argument is None or isinstance(argument, ast.Starred):
        raise CannotFix("get_global has no plain argument")
    applications = _applications(model, factory or decorate)
    if not applications:
        raise CannotFix("the decorator is not applied to a function of this module")
    builder = FixBuilder(project)
    file, _ = builder.file(model)
    fixed = []
    for function, application in applications:
        entries = launches(project, model, function)
        if not entries or not _only_launched(project, model, function, entries):
            continue
        type_code = _type_at(model, argument, wrapper, factory, application, entries)
        if type_code is None:
            continue
        for entry in entries:
            keyword = SCRATCH_KEYWORDS.get(entry.api)
            if keyword is None or not is_call_form(entry) or not keyword.mosaic_gpu_lowers and entry.api != "pl.pallas_call":
                raise CannotFix(f"{entry.api} takes no scratch this way")
            edit_sequence_keyword(builder, entry, keyword.keyword, type_code, first=False, add_if_missing=True)
        target = file.function(function)
        if target is None:
            raise CannotFix(f"{function.name} was not found")
        index = function.decorator_list.index(application)
        file.rewrite(target, lambda updated, index=index: updated.with_changes(
            decorators=[d for n, d in enumerate(updated.decorators) if n != index]))
        fixed.append(function.name)
    if len(fixed) != len(applications):
        raise CannotFix("a function the decorator wraps is not launched, or named other than at its launch, or "
                        "its launch cannot write the type")
    outermost = factory or decorate
    if _named_elsewhere(project, model, outermost, [a for _, a in applications]):
        raise CannotFix(f"{outermost.name} is used other than to decorate the launched bodies")
    from .run_scoped_allocation import _remove_function

    _remove_function(model, file, outermost)  # nothing applies it any more
    return builder.fix(f"pallas-lsp ({code}): Allocate the buffer @{outermost.name} hands on as scratch of "
                       f"{', '.join(fixed)}'s launch, in place of the decorator", "safe", preferred=True)


def _named_elsewhere(project, model, function: ast.FunctionDef, applications: list[ast.expr]) -> bool:
    """The decorator's name is read other than in the applications the fix removes (here or in an importer)."""
    applied = {id(a.func if isinstance(a, ast.Call) else a) for a in applications}
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Name) and node.id == function.name and id(node) not in applied:
            return True
    return any(function.name in other.text for other in project.importers(model))


def _returns(function: ast.FunctionDef, name: str) -> bool:
    last = function.body[-1]
    return isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == name


def _applications(model, decorator: ast.FunctionDef) -> list[tuple[ast.FunctionDef, ast.expr]]:
    """(function, decorator expression) for each function of `model` decorated by `decorator` (`@decorator` or,
    for a factory, `@decorator(...)`), where it is the innermost decorator (applied first, to the function itself)."""
    found = []
    for node in ast.walk(model.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            last = node.decorator_list[-1]
            named = last.func if isinstance(last, ast.Call) else last
            if isinstance(named, ast.Name) and named.id == decorator.name \
                    and model.lookup(named.id, model.scope_of(named), named.lineno) is model.module_binding(named.id):
                found.append((node, last))
    return found


def _only_launched(project, model, function: ast.AST, entries) -> bool:
    """Every load of the function's name in its scope is a launch's body argument, or hands it to a workspace
    class whose instances keep it in a field read only as a launch's body (`ActivationOp(_gelu_body)`, launched as
    `plgpu.kernel(self.body, ...)`): no call sees the function undecorated."""
    from ..analysis.values import ClassValue

    launched = {id(e.node.args[0]) for e in entries if isinstance(e.node, ast.Call) and e.node.args}
    if len(launched) != len(entries):
        return False
    scope = model.scope_of(function)
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == function.name and isinstance(node.ctx, ast.Load) \
                and id(node) not in launched:
            holder = model.parents.get(node)
            if not (isinstance(holder, ast.Call) and node in holder.args
                    and isinstance(project.evaluator.value(model, holder.func), ClassValue)
                    and _kept_for_launches(model, entries)):
                return False
    return True


def _kept_for_launches(model, entries) -> bool:
    """Each launch's body is `self.<field>`, and `.<field>` is read nowhere else in the module."""
    fields = set()
    for entry in entries:
        body = entry.node.args[0]
        if not (isinstance(body, ast.Attribute) and isinstance(body.value, ast.Name) and body.value.id == "self"):
            return False
        fields.add(body.attr)
    launched = {id(e.node.args[0]) for e in entries}
    return not any(isinstance(node, ast.Attribute) and node.attr in fields and isinstance(node.ctx, ast.Load)
                   and id(node) not in launched for node in ast.walk(model.tree))


def _type_at(model, argument: ast.expr, wrapper, factory, application: ast.expr, entries) -> str | None:
    """The type's code at the launches: the wrapper's names that are the factory's parameters written as the
    application passes them (a zero-argument factory lambda as its body), the module's own names kept; None where a
    name is neither, or means something else at a launch."""
    passed = _passed(factory, application)
    if passed is None:
        return None
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and not argument.args \
            and not argument.keywords and isinstance(passed.get(argument.func.id), ast.Lambda):
        made = passed[argument.func.id]
        if made.args.args or made.args.vararg or made.args.kwonlyargs or made.args.kwarg:
            return None
        argument, passed = made.body, {}  # written at the application: its names are the application's
        pieces = []
    else:
        pieces = []
        for name in [n for n in ast.walk(argument) if isinstance(n, ast.Name)]:
            binding = model.lookup(name.id, model.scope_of(name), name.lineno)
            if name.id in passed and binding is not None and binding.kind == "param":
                given = passed[name.id]
                if not _plain(given):
                    return None
                pieces.append((name, ast.get_source_segment(model.text, given), given))
            elif binding is None or binding is not model.module_binding(name.id):
                return None
    code = _substituted(model, argument, [(n, c) for n, c, _ in pieces])
    names = [n for n in ast.walk(argument) if isinstance(n, ast.Name) and not any(n is p for p, _, _ in pieces)]
    names += [n for _, _, given in pieces for n in ast.walk(given) if isinstance(n, ast.Name)]
    for entry in entries:
        for name in names:
            here = model.lookup(name.id, model.scope_of(name), name.lineno)
            there = model.lookup(name.id, model.scope_of(entry.node), entry.node.lineno)
            if here is None or here is not there or entry.model is not model:
                return None
    return code


def _passed(factory, application: ast.expr) -> dict[str, ast.expr] | None:
    """The factory's parameters as the application `@factory(a, b=c)` passes them; {} for a plain `@decorate`."""
    if factory is None:
        return {} if not isinstance(application, ast.Call) else None
    if not isinstance(application, ast.Call) or any(isinstance(a, ast.Starred) for a in application.args) \
            or any(k.arg is None for k in application.keywords):
        return None
    spec = factory.args
    positional = [*spec.posonlyargs, *spec.args]
    if spec.vararg or spec.kwarg or len(application.args) > len(positional):
        return None
    passed = {p.arg: a for p, a in zip(positional, application.args)}
    passed.update({k.arg: k.value for k in application.keywords})
    return passed

