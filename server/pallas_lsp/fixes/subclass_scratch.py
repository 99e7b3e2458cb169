"""Fix: a subclass hook's buffer allocated as scratch by the subclass, where a base class owns the launch.

A kernel class hierarchy: the base class builds the launch (`plgpu.kernel(self._body, ...,
scratch_types=self.scratch_types(x))`), its body hands the refs past its own to a hook
(`self.compute(tile, *extra)`), and each subclass says what the hook does and which extra scratch it
needs. A `get_global` of a buffer in one subclass's hook belongs in that subclass's scratch: the fix
overrides the scratch method in the subclass (`return super().scratch_types(x) + [T]`; or appends
to the override it already has), and the hook takes the buffer as its new last parameter. The base
class and the other subclasses are left as they are, so they keep working. The buffer's type is
written with the scratch method's own names: the hook's ref `tile.shape` is the shape its scratch
element is declared with there.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..analysis.kernels import KernelIndex
from ..analysis.values import ClassValue, MemType
from .kernel_edits import (CannotFix, FixBuilder, add_parameter, remove_get_global, unique_name)
from .sites import GlobalUse, global_use, launches

_MAX_DEPTH = 3  # the hook's locals followed to what they were assigned
_SHAPED = {"shape": 0, "dtype": 1}  # a scratch constructor's argument that is its ref's `.shape` / `.dtype`


def fix(project, model, call, value, code: str):
    if not isinstance(value, MemType) or not _scratch_kind(value):
        return None
    function = model.enclosing_function(call)
    owner = model.enclosing_class(function) if isinstance(function, ast.FunctionDef) else None
    if owner is None or model.scope_of(owner) is not model.tree or launches(project, model, function):
        return None  # not a hook of a module-level class, or launched as it is: the other scratch fixes
    use = global_use(model, call)
    if use is None:
        return None
    helper = _getter_of(project, model, owner, function, call)  # `def _f32(self, shape): return pl.get_global(...)`
    if helper is not None:  # its one call, `acc = self._f32(tile.shape)` in a hook, is the get_global there
        function, statement, helper_call = helper
        use = GlobalUse(model, helper_call, function, statement, statement.targets[0].id)
        helper = (helper_call, call, model.enclosing_function(call))
    order = _mro(project, model, owner)  # (module model, class), the owner first; bases in other modules too
    hook = function.name
    found = []  # (launch entry, body function, the hook's call in it, the scratch method's name)
    for source in dict.fromkeys(m for m, _ in order[1:]):
        for entry in KernelIndex.of(project, source).entries:
            body = entry.body.node if entry.body is not None else None
            if body is None or entry.body.model is not source or not any(
                    _defines(c, body) or _nested_in_method_of(source, body, c) for m, c in order[1:] if m is source):
                continue
            hook_call = _hook_call(source, body, hook)
            if hook_call is not None:
                found.append((entry, body, hook_call, _scratch_method(source, entry, order)))
    if not found:
        return None
    if len(found) != 1:
        raise CannotFix(f"several launches of {owner.name}'s base classes call {hook}")
    entry, body, hook_call, scratch = found[0]
    body_model = entry.model
    if scratch is None:
        raise CannotFix("the launch's scratch is not the instance's own scratch method (`self.scratch_types(x)`) "
                        "or a list ending with it")
    scratch, prefix, renamed = scratch
    resolved_body = _resolve(order, body.name)
    if resolved_body is not None and resolved_body[1] is not body and _is_method(body_model, body):
        raise CannotFix(f"{owner.name} overrides {body.name}")
    keyword = SCRATCH_KEYWORDS[entry.api].keyword
    defined = _resolve(order, scratch)
    resolved_hook = _resolve(order, hook)
    if defined is None or resolved_hook is None or resolved_hook[1] is not function:
        raise CannotFix(f"{scratch} is not a method of {owner.name}'s classes")
    for source in [model, *project.importers(model)]:
        for other in (n for n in source.tree.body if isinstance(n, ast.ClassDef) and n is not owner):
            if any(c is owner for _, c in _mro(project, source, other)[1:]) and (
                    _defines(other, hook) or _defines(other, scratch)):
                raise CannotFix(f"{other.name} derives from {owner.name} and overrides {hook} or {scratch}")
    params = _hook_params(function, hook_call)
    own = _defines(owner, scratch)
    elements = _scratch_elements(project, defined, order)
    if elements is None:
        raise CannotFix(f"{scratch} does not return a list or tuple written out")
    kind, items = elements
    items = [*((body_model, p) for p in prefix), *items]
    extras = len(params) - (len(hook_call.args) - 1)  # refs past the body's own the hook takes already
    fixed = [*body.args.posonlyargs, *body.args.args][1 if _is_method(body_model, body) else 0:]
    first_scratch = len(fixed) - (len(items) - extras)
    builder = FixBuilder(project)
    _, imports = builder.file(model)
    type_code = _type_code(model, function, call, hook_call, fixed, items, first_scratch, defined,
                           len(prefix), renamed, imports, helper)
    name = use.name or unique_name(model, function, "scratch_ref")
    add_parameter(builder, model, function, name, None)
    remove_get_global(builder, model, use, name)
    if own:
        _append_to_override(builder, model, defined[1], type_code)
        where = f"appended to {owner.name}.{scratch}"
    else:
        _add_override(builder, model, owner, function, defined, type_code, kind)
        where = f"in an override of {scratch} in {owner.name} that extends super()'s"
    if helper is not None:  # after the override's insertion, which counts the class's statements as they were
        _drop_method(builder, model, owner, helper[2])
    through = f", in place of {helper[2].name}, which goes" if helper is not None else ""
    title = (f"pallas-lsp ({code}): Allocate {name} as scratch ({keyword}) {where}, taken by {owner.name}.{hook}"
             f"{through}; the base class and the other subclasses are unchanged")
    return builder.fix(title, "safe", preferred=True)


def _getter_of(project, model, owner: ast.ClassDef, function: ast.FunctionDef, call: ast.Call):
    """(the hook, `name = self.<getter>(...)` in it, that call) where `function` is a method of `owner` that only
    returns the get_global (`return pl.get_global(plgpu.SMEM(shape, jnp.float32))`) and is named once in the
    workspace, by that assignment in another method of `owner`; None otherwise."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not (len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is call and function.args.args
            and not function.decorator_list and not (function.args.vararg or function.args.kwarg
                                                     or function.args.kwonlyargs or function.args.defaults)):
        return None
    named = [node for source in [model, *project.importers(model)] for node in ast.walk(source.tree)
             if (isinstance(node, ast.Attribute) and node.attr == function.name)
             or (isinstance(node, ast.Name) and node.id == function.name)]
    if len(named) != 1:
        return None
    getter = model.parents.get(named[0])
    statement = model.parents.get(getter)
    hook = model.enclosing_function(named[0])
    if not (isinstance(getter, ast.Call) and getter.func is named[0] and isinstance(named[0].value, ast.Name)
            and isinstance(hook, ast.FunctionDef) and model.enclosing_class(hook) is owner and hook.args.args
            and named[0].value.id == hook.args.args[0].arg and not getter.keywords
            and len(getter.args) == len(function.args.args) - 1
            and not any(isinstance(a, ast.Starred) for a in getter.args)
            and isinstance(statement, ast.Assign) and statement.value is getter and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and model.enclosing_function(statement) is hook
            and len(model.scopes[hook].bindings.get(statement.targets[0].id, [])) == 1):
        return None
    return hook, statement, getter


def _drop_method(builder: FixBuilder, model, owner: ast.ClassDef, method: ast.FunctionDef) -> None:
    """The class without `method` (a getter whose one call the fix replaced)."""
    file, _ = builder.file(model)
    target = file.find_ast(model, owner, cst.ClassDef)
    if target is None:
        raise CannotFix("the class was not found")

    def drop(updated: cst.ClassDef) -> cst.ClassDef:
        body = [node for node in updated.body.body
                if not (isinstance(node, cst.FunctionDef) and node.name.value == method.name)]
        if body and body[0] is not updated.body.body[0]:  # the class's new first statement: no blank line above
            body[0] = body[0].with_changes(leading_lines=[line for line in body[0].leading_lines if line.comment])
        return updated.with_changes(body=updated.body.with_changes(body=body))

    file.rewrite(target, drop)


def _scratch_kind(value: MemType) -> bool:
    """A block-local buffer or barrier, what scratch allocates as the kernel meant it."""
    return value.space in ("smem", "tmem", "regs", "vmem") or "Barrier" in value.constructor


def _mro(project, model, cls: ast.ClassDef) -> list[tuple[object, ast.ClassDef]]:
    """(module model, class) of the class and its workspace bases, nearest first (Python's order for single and
    mixin inheritance); a base is found through the evaluator, here or in a module it comes from."""
    order: list[tuple[object, ast.ClassDef]] = []
    stack = [(model, cls)]
    while stack:
        current_model, current = stack.pop(0)
        if any(c is current for _, c in order):
            continue
        order.append((current_model, current))
        bases = []
        for base in current.bases:
            value = project.evaluator.value(current_model, base)
            if isinstance(value, ClassValue) and value.model.scopes.get(value.node) is not None:
                bases.append((value.model, value.node))
        stack[:0] = bases
    return order


def _defines(cls: ast.ClassDef, name: str | ast.AST) -> bool:
    if isinstance(name, ast.AST):
        return any(node is name for node in cls.body)
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in cls.body)


def _resolve(order, name: str) -> tuple[object, ast.FunctionDef] | None:
    """(module model, method) the instance's `name` is, by the classes' order."""
    for model, cls in order:
        for node in cls.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return model, node
    return None


def _nested_in_method_of(model, function: ast.AST, cls: ast.ClassDef) -> bool:
    outer = model.enclosing_function(function)
    while outer is not None:
        if model.enclosing_class(outer) is cls:
            return True
        outer = model.enclosing_function(outer)
    return False


def _is_method(model, function: ast.FunctionDef) -> bool:
    return model.enclosing_class(function) is not None and not function.decorator_list


def _instance_name(model, body: ast.FunctionDef) -> str | None:
    """The instance's name in the body: its own first parameter (a method), or that of the method it is nested in."""
    function = body
    while function is not None and model.enclosing_class(function) is None:
        function = model.enclosing_function(function)
    if function is None or function.decorator_list or not function.args.args:
        return None
    return function.args.args[0].arg


def _hook_call(model, body: ast.FunctionDef, hook: str) -> ast.Call | None:
    """`self.compute(tile, *extra)` in the body: the hook called once, on the instance, handing it the refs past
    the body's own (`*extra`, the body's variadic parameter) last."""
    instance, vararg = _instance_name(model, body), body.args.vararg
    calls = [node for node in ast.walk(body) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == hook and isinstance(node.func.value, ast.Name) and node.func.value.id == instance]
    if len(calls) != 1 or vararg is None:
        return None
    found = calls[0]
    last = found.args[-1] if found.args else None
    if found.keywords or not (isinstance(last, ast.Starred) and isinstance(last.value, ast.Name)
                              and last.value.id == vararg.arg) or any(isinstance(a, ast.Starred) for a in found.args[:-1]):
        return None
    return found


def _scratch_method(model, entry, order) -> tuple[str, list[ast.expr], dict[str, str]] | None:
    """The name of the instance's method the launch's scratch comes from (`scratch_types=self.scratch_types(x)`,
    or a local assigned that once), where the launch is in a method of one of the classes, and the scratch the
    launch lists before it (`[T] + self.extra(x)`, `[T, *self.extra(x)]`): the method's comes last."""
    keyword = SCRATCH_KEYWORDS.get(entry.api)
    found = entry.kernel.kwarg(keyword.keyword) if keyword else None
    node = found[1] if found else None
    if isinstance(node, ast.Name):
        binding = model.lookup(node.id, model.scope_of(node), node.lineno)
        node = binding.value if binding is not None and binding.kind == "assign" else None
    launcher = model.enclosing_function(entry.node)
    prefix: list[ast.expr] = []  # scratch the launch lists before the method's (`[T, *self.extra(x)]`)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.List):
        prefix, node = list(node.left.elts), node.right
    elif isinstance(node, ast.List) and node.elts and isinstance(node.elts[-1], ast.Starred):
        prefix, node = list(node.elts[:-1]), node.elts[-1].value
    if any(isinstance(e, ast.Starred) for e in prefix):
        return None
    if isinstance(node, ast.Attribute) and _is_property((_resolve(order, node.attr) or (None, None))[1]):
        node = ast.Call(func=node, args=[], keywords=[])  # `self.scratch_types`, a property: read as a call
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and isinstance(launcher, ast.FunctionDef) and launcher.args.args
            and node.func.value.id == launcher.args.args[0].arg
            and any(model.enclosing_class(launcher) is c for _, c in order)):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    # The launcher's names the method is handed, as the method's parameters call them (`self` is `self` there).
    defined = _resolve(order, node.func.attr)
    if defined is None:
        return None
    params = [a.arg for a in defined[1].args.args]
    renamed = {launcher.args.args[0].arg: params[0]} if params else {}
    for index, argument in enumerate(node.args):
        if isinstance(argument, ast.Name) and index + 1 < len(params):
            renamed[argument.id] = params[index + 1]
    renamed.update({k.value.id: k.arg for k in node.keywords if isinstance(k.value, ast.Name)})
    return node.func.attr, prefix, renamed


def _is_property(function: ast.FunctionDef | None) -> bool:
    return function is not None and [ast.unparse(d) for d in function.decorator_list] == ["property"]


def _hook_params(function: ast.FunctionDef, hook_call: ast.Call) -> list[ast.arg]:
    """The hook's parameters after `self`; CannotFix where one more positional one cannot follow them."""
    args = function.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs or function.decorator_list:
        raise CannotFix(f"{function.name} has a signature a new last parameter would not fit")
    params = args.args[1:]
    if len(params) < len(hook_call.args) - 1:
        raise CannotFix(f"{function.name} takes fewer refs than the base class hands it")
    return params


def _scratch_elements(project, defined, order) -> tuple[str, list[tuple[object, ast.expr]]] | None:
    """("list" or "tuple", (module model, element) of each scratch element in their order) of what the scratch
    method (`defined`: its model and function) returns: its one `return [...]`, or `return super().<name>(...) +
    [...]` over the base's."""
    model, function = defined
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None
    value = returns[0].value
    if isinstance(value, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return ("list" if isinstance(value, ast.List) else "tuple"), [(model, e) for e in value.elts]
    if (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and isinstance(value.right, (ast.List, ast.Tuple))
            and _is_super_call(value.left, function.name)):
        at = next(n for n, (_, c) in enumerate(order) if _defines(c, function))
        base = _resolve(order[at + 1:], function.name)
        inherited = _scratch_elements(project, base, order) if base is not None else None
        if inherited is None or not isinstance(value.right, ast.List if inherited[0] == "list" else ast.Tuple):
            return None
        return inherited[0], [*inherited[1], *((model, e) for e in value.right.elts)]
    return None


def _is_super_call(node: ast.AST, name: str) -> bool:
    """`super().<name>(...)`, or `super().<name>` (a property)."""
    if isinstance(node, ast.Call):
        node = node.func
    return (isinstance(node, ast.Attribute) and node.attr == name
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "super" and not node.value.args)


def _type_code(model, hook, call, hook_call, fixed, items, first_scratch, defined, prefixed: int,
               renamed: dict[str, str], imports, helper=None) -> str:
    """The get_global's argument written in the scratch method: the hook's instance as its instance, a scratch
    ref's `.shape`/`.dtype` as that element's shape/dtype argument, the hook's locals by what they were
    assigned, module names as they are (another module's imports as this module spells them)."""
    if helper is not None:  # the getter's get_global, its parameters the arguments the hook passes
        getter_call, call, getter = helper
        passed = dict(zip((a.arg for a in getter.args.args[1:]), getter_call.args))
    argument = call.args[0] if call.args and not call.keywords else None
    if argument is None or isinstance(argument, ast.Starred):
        raise CannotFix("get_global has no plain argument")
    method = defined[1]

    def getter_parameter(binding) -> ast.AST | None:
        """What the hook passes the getter for its parameter `binding` (its instance: the hook's)."""
        if helper is None or binding is None or binding.kind != "param" or model.parents.get(
                model.parents.get(binding.node)) is not getter:
            return None
        if binding.node is getter.args.args[0]:
            return hook.args.args[0]
        return passed.get(binding.node.arg)
    scratch_params = {a.arg for a in ast.walk(method.args) if isinstance(a, ast.arg)}
    method_self = method.args.args[0].arg if method.args.args else None
    if method_self is None:
        raise CannotFix("the scratch method has no instance")

    def element_of(param: ast.arg):
        """(module model, the scratch element) the body hands the hook as `param`."""
        index = hook.args.args[1:].index(param)
        if index >= len(hook_call.args) - 1:
            return items[len(items) - (len(hook.args.args[1:]) - index)] if items else None  # one of `*extra`
        passed = hook_call.args[index]
        names = [a.arg for a in fixed]
        if not isinstance(passed, ast.Name) or passed.id not in names:
            return None
        position = names.index(passed.id) - first_scratch
        return items[position] if 0 <= position < len(items) else None

    def written(node: ast.AST, depth: int) -> str:
        replacements = []
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                raise CannotFix("the buffer's type binds names of its own")
        skip: set[int] = set()
        for inner in ast.walk(node):
            if id(inner) in skip:
                continue
            if isinstance(inner, ast.Attribute) and inner.attr in _SHAPED and isinstance(inner.value, ast.Name):
                binding = model.lookup(inner.value.id, model.scope_of(inner), inner.lineno)
                given = getter_parameter(binding)
                if isinstance(given, ast.Name):  # the hook's ref, handed to the getter
                    binding = model.lookup(given.id, model.scope_of(given), given.lineno)
                param = binding.node if binding is not None and binding.kind == "param" else None
                if isinstance(param, ast.arg) and param in hook.args.args[1:]:
                    element = element_of(param)
                    part = _constructor_argument(element[1], inner.attr) if element is not None else None
                    if part is None:
                        raise CannotFix(f"{inner.value.id}.{inner.attr} has no counterpart in {method.name}")
                    # An element the launcher lists is written with its names: those it hands the method
                    # are the method's parameters.
                    launcher_written = any(element is item for item in items[:prefixed])
                    names = renamed if launcher_written else {name: name for name in scratch_params}
                    replacements.append((inner, _element_code(element[0], part, names, model, imports)))
                    skip.add(id(inner.value))
                    continue
            if not isinstance(inner, ast.Name):
                continue
            binding = model.lookup(inner.id, model.scope_of(inner), inner.lineno)
            if binding is None or binding is model.module_binding(inner.id):
                if inner.id in scratch_params:
                    raise CannotFix(f"{inner.id} means something else in {method.name}")
                continue
            given = getter_parameter(binding)
            if isinstance(given, ast.arg):  # the getter's instance
                replacements.append((inner, method_self))
            elif given is not None:
                code = written(given, depth + 1)
                replacements.append((inner, code if _atom(code) else f"({code})"))
            elif binding.kind == "param" and binding.node is hook.args.args[0]:
                replacements.append((inner, method_self))
            elif binding.kind == "assign" and binding.value is not None and depth < _MAX_DEPTH \
                    and model.enclosing_function(binding.node) is hook:
                code = written(binding.value, depth + 1)
                replacements.append((inner, code if _atom(code) else f"({code})"))
            else:
                raise CannotFix(f"{inner.id} has no counterpart in {method.name}")
        return _substitute(model, node, replacements)

    return written(argument, 0)


def _constructor_argument(element: ast.expr, attr: str) -> ast.expr | None:
    """The shape (or dtype) argument of a scratch element `plgpu.SMEM((rows, d), x.dtype)`."""
    if not isinstance(element, ast.Call) or any(isinstance(a, ast.Starred) for a in element.args):
        return None
    keywords = {k.arg: k.value for k in element.keywords}
    if attr in keywords:
        return keywords[attr]
    index = _SHAPED[attr]
    return element.args[index] if index < len(element.args) else None


def _element_code(model, part: ast.expr, names: dict[str, str], owner_model, imports) -> str:
    """A scratch element's argument (in `model`) as an override in `owner_model` taking the scratch method's
    parameters writes it: each name of `names` as it is called there, module names as they are, or, from another
    module, the modules it imports as the owner's module spells them (imported there if need be)."""
    replacements = []
    for inner in ast.walk(part):
        if not isinstance(inner, ast.Name):
            continue
        binding = model.lookup(inner.id, model.scope_of(inner), inner.lineno)
        if inner.id in names:
            if names[inner.id] != inner.id:
                replacements.append((inner, names[inner.id]))
        elif inner.id in names.values() or not (binding is None or binding is model.module_binding(inner.id)):
            raise CannotFix(f"{inner.id}, where the scratch is listed, has no counterpart in the scratch method")
        elif model is not owner_model:
            dotted = _imported(binding)
            if dotted is None:
                raise CannotFix(f"{inner.id} of another module has no counterpart where the subclass is written")
            try:
                spelled = imports.name(dotted)
            except KeyError:
                raise CannotFix(f"{dotted} is not imported where the subclass is written") from None
            if spelled != inner.id:
                replacements.append((inner, spelled))
    if ast.get_source_segment(model.text, part) is None:
        raise CannotFix("the scratch element was not found")
    return _substitute(model, part, replacements)


def _imported(binding) -> str | None:
    """The dotted name an import binding stands for (`jax.numpy` for `import jax.numpy as jnp`)."""
    if binding is None or binding.kind != "import" or not isinstance(binding.node, ast.alias):
        return None
    source = binding.import_from
    if isinstance(source, ast.ImportFrom):
        return f"{source.module}.{binding.node.name}" if source.module and not source.level else None
    return binding.node.name


def _atom(code: str) -> bool:
    parsed = ast.parse(code, mode="eval").body
    return isinstance(parsed, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.Tuple, ast.List))


def _substitute(model, node: ast.AST, replacements: list[tuple[ast.AST, str]]) -> str:
    from .type_in_scope import _substituted

    return _substituted(model, node, replacements)


def _add_override(builder: FixBuilder, model, owner: ast.ClassDef, hook: ast.FunctionDef, defined,
                  type_code: str, kind: str) -> None:
    """`def scratch_types(self, x): return super().scratch_types(x) + [T]`, just before the hook."""
    _check_super(owner)
    file, _ = builder.file(model)
    defined_model, defined = defined
    params = ast.unparse(defined.args)
    if defined_model is not model:  # the base's annotations and defaults may name what this module does not
        arguments = defined.args
        if arguments.defaults or any(d is not None for d in arguments.kw_defaults):
            raise CannotFix(f"{defined.name} of another module has defaults, which the override would repeat")
        params = ast.unparse(ast.arguments(
            posonlyargs=[ast.arg(a.arg) for a in arguments.posonlyargs], args=[ast.arg(a.arg) for a in arguments.args],
            vararg=ast.arg(arguments.vararg.arg) if arguments.vararg else None,
            kwonlyargs=[ast.arg(a.arg) for a in arguments.kwonlyargs], kw_defaults=[None] * len(arguments.kwonlyargs),
            kwarg=ast.arg(arguments.kwarg.arg) if arguments.kwarg else None, defaults=[]))
    passed = [a.arg for a in defined.args.args[1:]]
    passed += [f"*{defined.args.vararg.arg}"] if defined.args.vararg else []
    passed += [f"{a.arg}={a.arg}" for a in defined.args.kwonlyargs]
    passed += [f"**{defined.args.kwarg.arg}"] if defined.args.kwarg else []
    added = f"[{type_code}]" if kind == "list" else f"({type_code},)"
    unit = file.indent
    prefix, read = ("@property\n", "") if _is_property(defined) else ("", f"({', '.join(passed)})")
    returned = f"return super().{defined.name}{read} + {added}"
    if hook.col_offset + 2 * len(unit) + len(returned) > file.line_length:  # one element a line, as a formatter would
        opening, closing = ("[", "]") if kind == "list" else ("(", ")")
        returned = f"return super().{defined.name}{read} + {opening}\n{unit}{unit}{type_code},\n{unit}{closing}"
    method = cst.parse_statement(f"{prefix}def {defined.name}({params}):\n{unit}{returned}\n")
    target = file.find_ast(model, owner, cst.ClassDef)
    if target is None:
        raise CannotFix("the class was not found")
    statements = [node for node in owner.body]
    index = next(n for n, node in enumerate(statements) if node is hook)

    def insert(updated: cst.ClassDef) -> cst.ClassDef:
        body = list(updated.body.body)
        before = body[index]
        blank = [line for line in before.leading_lines if line.comment is None]
        comments = [line for line in before.leading_lines if line.comment is not None]  # the hook's own
        body[index:index] = [method.with_changes(leading_lines=blank if index else [])]
        body[index + 1] = before.with_changes(leading_lines=[cst.EmptyLine(indent=False), *comments])
        return updated.with_changes(body=updated.body.with_changes(body=body))

    file.rewrite(target, insert)


def _check_super(owner: ast.ClassDef) -> None:
    """`super()` without arguments fails in a `@dataclass(slots=True)` (Python rebuilds the class)."""
    for decorator in owner.decorator_list:
        if isinstance(decorator, ast.Call) and any(k.arg == "slots" for k in decorator.keywords):
            raise CannotFix(f"{owner.name} is a dataclass with slots, where super() without arguments fails")


def _append_to_override(builder: FixBuilder, model, defined: ast.FunctionDef, type_code: str) -> None:
    """The subclass's own scratch method returns one more element."""
    from .kernel_edits import _sequence_with

    value = next(node for node in ast.walk(defined) if isinstance(node, ast.Return)).value
    written = value.right if isinstance(value, ast.BinOp) else value
    file, _ = builder.file(model)
    target = file.find_ast(model, written, (cst.List, cst.Tuple))
    if target is None:
        raise CannotFix("the scratch list was not found")
    file.rewrite(target, lambda updated: _sequence_with(updated, type_code, first=False))
