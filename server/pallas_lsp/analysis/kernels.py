"""Kernel entry points, whether each runs in interpret mode, and the code each one reaches.

An entry point is where a Python function becomes a Pallas kernel: `pl.pallas_call(body, ...)`,
`plgpu.kernel(body, ...)` and its decorator forms, `pl.kernel(..., mesh=...)`, `pl.core_map(mesh)`, and a call
of a launch wrapper that hands its arguments on to one of these (`launch_wrappers.py`: `self.pallas_call(body, ...)`).
The code it reaches is its body plus every user function the body refers to, transitively:
helpers, `pl.run_scoped`/`pl.when`/`lax.fori_loop` bodies, `functools.partial` targets, and
helpers in other modules of the workspace.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from . import reads
from .call_graph import called_method, object_callees
from .chosen_bodies import function_options
from .evaluate import KERNEL_FACTORIES
from .launch_wrappers import body_launcher, forwarded_call, lifted_pallas_call
from .model import FunctionNode, child_nodes
from .plain_callees import plain_callee
from .values import (Api, ClassValue, Const, Func, Instance, InterpretParams, KernelCall, Mapping, OneOf, Partial,
                     Value)

if TYPE_CHECKING:
    from .model import ModuleModel
    from .project import Project

FORCE_INTERPRET = {"plgpu.force_gpu_interpret_mode", "pltpu.force_tpu_interpret_mode"}
SET_INTERPRET = {"plgpu.set_gpu_interpret_mode", "pltpu.set_tpu_interpret_mode"}
# `pl.pallas_call(...)` and `pl.kernel(...)` read the interpret-mode switch when they are built (pallas_call.py,
# helpers.py `kernel`: `config.pallas_tpu_interpret_mode_context_manager.value or interpret`); plgpu.kernel
# and core_map read it when the kernel is traced (checked with jax 0.12: a pl.kernel built before
# `with plgpu.force_gpu_interpret_mode():` and called in it is compiled).
READS_MODE_WHEN_BUILT = {"pl.pallas_call", "pl.kernel"}
_FUNCTION_CLASSES = frozenset(FunctionNode)
_NOT_FUNCTION_ATTRS = {"at", "shape", "dtype", "ndim", "size", "T", "astype", "reshape", "bitcast", "transform"}


@dataclass(frozen=True)
class InterpretSite:
    """What makes a kernel interpreted, for the diagnostic's related information."""

    model: "ModuleModel"
    node: ast.AST
    reason: str


@dataclass(eq=False)
class EntryPoint:
    api: str
    model: "ModuleModel"
    node: ast.AST
    kernel: KernelCall
    interpret: list[InterpretSite] = field(default_factory=list)  # certainly interpreted (some launch)
    maybe_interpret: list[InterpretSite] = field(default_factory=list)  # interpreted depending on a runtime value

    def mark(self, site: InterpretSite) -> None:
        if site not in self.interpret:
            self.interpret.append(site)

    def mark_maybe(self, site: InterpretSite) -> None:
        if site not in self.maybe_interpret:
            self.maybe_interpret.append(site)

    @property
    def body(self) -> Func | None:
        return unwrap_function(self.kernel.body) or called_method(self.kernel.body)


def _launch_wrapper(value: Value) -> bool:
    """A function that hands its arguments on to a call (`launch_wrappers.forwarded_call`), or builds a kernel
    around the body it is handed (`launch_wrappers.body_launcher`): a call of it may build a kernel."""
    return isinstance(value, Func) and (forwarded_call(value.node) is not None or body_launcher(value.node) is not None
                                        or lifted_pallas_call(value.node) is not None)


def _built_at_callers(model: "ModuleModel", call: ast.Call) -> bool:
    """`call` is the factory call of a launch wrapper this module calls (`def _kernel(cfg, name, body, **kwargs):
    return plgpu.kernel(body, ...)`): each call of the wrapper is the kernel's entry, with its body and keywords."""
    function = model.enclosing_function(call)
    return (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.args.vararg is None
            and forwarded_call(function) is call and bool(model.calls_named(function.name)))


def _each_body(kernel: KernelCall) -> list[KernelCall]:
    """The kernel once per body it may run: one launch of `functools.partial(kernel, ...)` where `kernel` is one of
    two functions (`kernel = a if inline else b`, paged attention's; `BODIES[name]`, a factory's choice) is a kernel
    of each, as JAX traces either."""
    options = function_options(kernel.body)
    if options == [kernel.body] or not all(unwrap_function(option) is not None for option in options):
        return [kernel]
    return [dataclasses.replace(kernel, body=option) for option in options]


def unwrap_function(value: Value | None) -> Func | None:
    while isinstance(value, Partial):
        value = value.func
    return value if isinstance(value, Func) else None


YES, MAYBE, NO = "yes", "maybe", "no"


def _interpret_reason(value: Value) -> bool:
    if isinstance(value, InterpretParams):
        return True
    return isinstance(value, Const) and bool(value.value)


def interpret_certainty(evaluator, model: "ModuleModel", value: Value, node: ast.AST | None, depth: int = 0) -> str:
    """Whether an `interpret=` value turns interpret mode on: YES (for at least one launch, certainly),
    MAYBE (a conditional, the environment or the platform decides at run time), NO (off, or nothing says it is on)."""
    if _interpret_reason(value):
        return YES
    if isinstance(value, OneOf):
        levels = {interpret_certainty(evaluator, model, option, None, depth) for option in value.options}
        return YES if YES in levels else MAYBE if MAYBE in levels else NO
    if isinstance(value, Const):
        # A parameter's default, where a call passes a command-line option or the like (seen as unknown, so
        # the default stood for it): decided at run time.
        binding = model.lookup(node.id, model.scope_of(node), node.lineno) if isinstance(node, ast.Name) else None
        if binding is not None and binding.kind == "param" and _passed_at_run_time(evaluator, model, binding.node, 0):
            return MAYBE
        return NO
    if isinstance(node, ast.IfExp):
        levels = {interpret_certainty(evaluator, model, evaluator.value(model, branch), branch, depth)
                  for branch in (node.body, node.orelse)}
        return YES if levels == {YES} else MAYBE if levels & {YES, MAYBE} else NO
    if node is not None and _decided_at_run_time(evaluator, model, node):
        return MAYBE
    if isinstance(node, ast.Call) and depth < 2:
        return _helper_certainty(evaluator, model, node, depth)
    return NO


def _helper_certainty(evaluator, model: "ModuleModel", call: ast.Call, depth: int) -> str:
    """`interpret=_interpret_mode()` of `def _interpret_mode(): return pltpu.InterpretParams() if
    jax.default_backend() != "tpu" else False`: what the helper's returns say, each where it is written."""
    from .returns import returns_in

    func = evaluator.value(model, call.func)
    if not isinstance(func, Func) or not isinstance(func.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return NO
    returns = [r for r in returns_in(func.node.body) if r.value is not None]
    levels = {interpret_certainty(evaluator, func.model, evaluator.value(func.model, r.value), r.value, depth + 1)
              for r in returns}
    return YES if levels == {YES} else MAYBE if levels & {YES, MAYBE} else NO


# What asks the machine it runs on: its backend or devices (`jax.default_backend() == "cpu"`,
# `jax.devices()[0].platform`, jax's test utilities' `jtu.test_device_matches(["cpu"])`).
_PLATFORM_QUERIES = {"default_backend", "devices", "local_devices", "get_backend", "test_device_matches",
                     "device_under_test", "is_device_tpu", "is_device_tpu_at_least", "is_device_cuda"}


# A device's own answer, on whatever it was reached through (`mesh.devices.flat[0].platform != "tpu"`).
_DEVICE_ATTRIBUTES = {"platform", "device_kind"}


def _asks_run_time(name: str) -> bool:
    parts = name.split(".")
    if parts[:2] in (["os", "environ"], ["os", "getenv"]):
        return True
    return parts[0] == "jax" and parts[-1] in _PLATFORM_QUERIES


def _decided_at_run_time(evaluator, model: "ModuleModel", node: ast.AST, depth: int = 0) -> bool:
    """`os.environ[...]`, `os.environ.get(...)`, `os.getenv(...)`, or a query of the platform (`jax.default_backend()`,
    `jax.devices()`, a device's `.platform`) somewhere in the expression, or in what a name in it was assigned (`INTERPRET =
    os.environ.get(...) == "1"`, `ON_TPU = jax.default_backend() == "tpu"` and then `interpret=not ON_TPU`)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute) and child.attr in _DEVICE_ATTRIBUTES:
            return True
        if isinstance(child, ast.Attribute) and child.attr in command_line_options(model):
            return True  # `interpret=args.interpret` of `parser.add_argument("--interpret", ...)`
        if isinstance(child, (ast.Attribute, ast.Name)):
            value = evaluator.value(model, child)
            if isinstance(value, Api) and _asks_run_time(value.name):
                return True
        if isinstance(child, ast.Name) and depth < 3:
            binding = model.lookup(child.id, model.scope_of(child), child.lineno)
            if (binding is not None and binding.kind == "assign" and binding.value is not None
                    and _decided_at_run_time(evaluator, model, binding.value, depth + 1)):
                return True
            if binding is not None and binding.kind == "param" and _passed_at_run_time(
                    evaluator, model, binding.node, depth):
                return True
    return False


def _passed_at_run_time(evaluator, model: "ModuleModel", parameter: ast.AST, depth: int) -> bool:
    """A parameter some call (or `functools.partial`) passes an expression decided at run time:
    `residual_add(..., *, interpret=False)` launched as `functools.partial(residual_add, interpret=args.interpret)`."""
    arguments = model.parents.get(parameter)
    function = model.parents.get(arguments)
    if not (isinstance(parameter, ast.arg) and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))):
        return False
    spec = function.args
    positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
    from .call_sites import argument_sites

    for where, call, func, passed in argument_sites(evaluator, model, function):
        named = passed.keywords or (call.keywords if isinstance(call, ast.Call) else [])  # a partial's own
        nodes = [k.value for k in named if k.arg == parameter.arg]
        if not nodes and parameter.arg in positional:
            index = positional.index(parameter.arg) - (1 if getattr(func, "self_value", None) is not None else 0)
            nodes = passed.args[index:index + 1] if 0 <= index < len(passed.args) else []
        if any(isinstance(n, ast.AST) and _decided_at_run_time(evaluator, where, n, depth + 1) for n in nodes):
            return True
    return False


_OPTION_DEFINITIONS = ("DEFINE_bool", "DEFINE_boolean", "DEFINE_string", "DEFINE_integer", "DEFINE_enum")


def command_line_options(model: "ModuleModel") -> frozenset[str]:
    """The attribute names the module's command-line options are read by: `parser.add_argument("--interpret")`
    (or `dest="interpret"`) is `args.interpret`, absl's `flags.DEFINE_bool("interpret", ...)` `FLAGS.interpret`."""
    found = model.eval_cache.get("command-line-options")
    if found is not None:
        return found
    names: set[str] = set()
    if model.mentions("add_argument") or model.mentions("DEFINE_"):
        for call in model.calls:
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            strings = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            dest = [k.value.value for k in call.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)]
            if name == "add_argument" and dest:
                names.add(str(dest[0]))
            elif name == "add_argument":
                names.update(o[2:].replace("-", "_") for o in strings[:2] if o.startswith("--"))
            elif name in _OPTION_DEFINITIONS and strings:
                names.add(strings[0])
    found = model.eval_cache["command-line-options"] = frozenset(names)
    return found


class KernelIndex:
    """Entry points of one module, with their interpret-mode sites. Built once per module text."""

    def __init__(self, project: "Project", model: "ModuleModel"):
        self.project = project
        self.model = model
        self.evaluator = project.evaluator
        self.entries: list[EntryPoint] = []
        self._find_entries()
        self._mark_interpret_keywords()

    @classmethod
    def of(cls, project: "Project", model: "ModuleModel") -> "KernelIndex":
        index = model.eval_cache.get("kernel-index")
        if index is None:
            with reads.frame():  # what another module's index reads is not what this analysis reads
                index = cls(project, model)
                model.eval_cache["kernel-index"] = index
                index._mark_interpret_contexts()
        return index

    def _find_entries(self) -> None:
        self.entries = [EntryPoint(api, self.model, node, kernel) for api, node, kernel in entry_kernels(self.project, self.model)]

    def _entry_kernels(self) -> list[tuple[str, ast.AST, KernelCall]]:
        found: list[tuple[str, ast.AST, KernelCall]] = []
        seen: set[int] = set()
        model, evaluator, project = self.model, self.evaluator, self.project
        for call in model.calls:
            if plain_callee(project, model, call):
                continue
            func = evaluator.value(model, call.func)
            if not (isinstance(func, (KernelCall, Partial)) or (isinstance(func, Api) and func.name in KERNEL_FACTORIES)
                    or _launch_wrapper(func)):
                continue
            if _built_at_callers(model, call):
                continue
            value = evaluator.value(model, call)
            if isinstance(value, KernelCall) and value.body is not None and id(value.node) not in seen:
                seen.add(id(value.node))
                found.extend((value.api, call, kernel) for kernel in _each_body(value))
        for func in model.functions:
            for decorator in reversed(getattr(func, "decorator_list", [])):
                kernel = self._decorator_kernel(decorator, Func(model, func))
                if kernel is not None and id(kernel.node) not in seen:
                    seen.add(id(kernel.node))
                    found.append((kernel.api, decorator, kernel))
        return found

    def _decorator_kernel(self, decorator: ast.expr, body: Func) -> KernelCall | None:
        value = self.evaluator.value(self.model, decorator)
        if value == Api("plgpu.warp_map"):  # `@plgpu.warp_map`: the function runs at warp level where defined
            return KernelCall(value.name, self.model, decorator, body, ())
        if isinstance(value, KernelCall) and value.body is None:
            return KernelCall(value.api, self.model, decorator, body, value.kwargs)
        if isinstance(value, Partial) and isinstance(value.func, Api) and value.func.name in KERNEL_FACTORIES:
            nodes = {k.arg: k.value for k in getattr(decorator, "keywords", []) if k.arg}
            kwargs = tuple((k, v, nodes.get(k)) for k, v in value.kwargs)
            return KernelCall(value.func.name, self.model, decorator, body, kwargs)
        if isinstance(value, Partial) and _launch_wrapper(value.func) and isinstance(decorator, ast.Call):
            # `@functools.partial(self.kernel, out_type=...)` of a launch wrapper: built at the decorator
            kernel = self.evaluator.call(self.model, value, [body], {}, decorator, None, complete=True)
            if isinstance(kernel, KernelCall) and kernel.node is decorator:
                return kernel
        return None

    def _mark_interpret_keywords(self) -> None:
        for entry in self.entries:
            candidates = []
            found = entry.kernel.kwarg("interpret")
            if found:
                candidates.append((self.model, found[0], found[1] if found[1] is not None else entry.node))
            candidates.extend(self._forwarded_interpret(entry))
            for model, value, node in candidates:
                level = interpret_certainty(self.evaluator, model, value, node)
                if level == NO:
                    continue
                text = model.segment(node, 60)
                reason = text if text.startswith("interpret=") or "interpret=" in text else f"interpret={text}"
                site = InterpretSite(model, node, reason)
                entry.mark(site) if level == YES else entry.mark_maybe(site)

    def _forwarded_interpret(self, entry: EntryPoint):
        """`interpret=` reaching the factory through the `**kwargs` of the function that calls it:
        (model, value, node) for each call of that function passing one."""
        call, model = entry.node, self.model
        if not isinstance(call, ast.Call):
            return
        func = model.enclosing_function(call)
        kwarg = getattr(getattr(func, "args", None), "kwarg", None)
        if kwarg is None or not any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwarg.arg
                                    for k in call.keywords):
            return
        for caller in model.calls_named(getattr(func, "name", "")):
            target = self.evaluator.value(model, caller.func)
            if not (isinstance(target, Func) and target.node is func):
                continue
            for keyword in caller.keywords:
                if keyword.arg == "interpret":
                    yield model, self.evaluator.value(model, keyword.value), keyword
                elif keyword.arg is None:
                    spread = self.evaluator.value(model, keyword.value)
                    if isinstance(spread, Mapping) and spread.get("interpret") is not None:
                        yield model, spread.get("interpret"), keyword.value

    # ---- interpret mode from context managers and global switches ------------------------------

    def _api_call_name(self, expr: ast.AST) -> str | None:
        if isinstance(expr, ast.Call):
            func = self.evaluator.value(self.model, expr.func)
            if isinstance(func, Api):
                return func.name
        return None

    def _switches(self) -> tuple[list, list]:
        """The `with` items that force interpret mode, and the calls that set it: `(with, item)`s, calls."""
        contexts = [(with_node, item) for with_node in self.model.withs for item in with_node.items
                    if self._api_call_name(item.context_expr) in FORCE_INTERPRET]
        return contexts, [call for call in self.model.calls if not plain_callee(self.project, self.model, call)
                          and self._api_call_name(call) in SET_INTERPRET]

    def _mark_interpret_contexts(self) -> None:
        model = self.model
        # Kept with what they read (a switch is a call: an edit of one forgets them), not with the index.
        contexts, switches = model.eval_cache.get("interpret-switches") or reads.kept(
            model.eval_cache, "interpret-switches", self._switches, model.read_key, ("calls", id(model), "*"))
        for with_node, item in contexts:
            site = InterpretSite(model, item.context_expr, f"with {model.segment(item.context_expr, 60)}")
            for stmt in with_node.body:
                self._mark_invoked(stmt, site)
        for call in switches:
            args = [self.evaluator.value(model, a) for a in call.args] or [
                self.evaluator.value(model, k.value) for k in call.keywords]
            if args and isinstance(args[0], Const) and not args[0].value:
                continue  # set_*_interpret_mode(None/False) switches it off
            site = InterpretSite(model, call, model.segment(call, 60))
            scope = model.enclosing_function(call)
            if scope is None:
                # Module level: every kernel traced after this import-time switch is interpreted;
                # pallas_call reads the switch when it is built, the others when they are traced.
                for entry in self.entries:
                    built_later = model.enclosing_function(entry.node) is not None or entry.node.lineno > call.lineno
                    if built_later or entry.api not in READS_MODE_WHEN_BUILT:
                        entry.mark(site)
            else:
                # Statements after the switch; a statement inside one already walked is not walked again.
                walked: set[int] = set()
                for stmt in ast.walk(scope):
                    if not (isinstance(stmt, ast.stmt) and stmt.lineno > call.lineno
                            and model.enclosing_function(stmt) is scope):
                        continue
                    walked.add(id(stmt))
                    if id(_enclosing_statement(model, stmt)) not in walked:
                        self._mark_invoked(stmt, site)

    def _mark_invoked(self, stmt: ast.AST, site: InterpretSite, entered: set[int] | None = None) -> None:
        """Mark kernels built or launched in `stmt` (directly or through a called function, at any depth:
        a wrapper `def body(*operands): return body_kernel(sem, *operands)` launches the kernel
        `body_kernel`) as interpreted. `entered`: the functions whose bodies were walked already."""
        entered = set() if entered is None else entered
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                for entry in self.entries:
                    if entry.node is node:
                        entry.mark(site)
            if not isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
                continue
            value = self.evaluator.value(self.model, node)
            while isinstance(value, Partial):  # functools.partial(plgpu.kernel(...), x): the kernel with an operand
                value = value.func
            if isinstance(value, KernelCall) and value.api not in READS_MODE_WHEN_BUILT:
                for entry in KernelIndex.of(self.project, value.model).entries:
                    if entry.kernel.node is value.node:
                        entry.mark(site)
            func = unwrap_function(value)
            if func is not None:
                index = self if func.model is self.model else KernelIndex.of(self.project, func.model)
                for entry in index.entries:
                    if _inside(func.model, entry.node, func.node):
                        entry.mark(site)
                if id(func.node) not in entered and len(entered) < _MAX_ENTERED:
                    entered.add(id(func.node))
                    body = func.node.body  # a lambda's is one expression
                    for inner in body if isinstance(body, list) else [body]:
                        index._mark_invoked(inner, site, entered)


_MAX_ENTERED = 200  # functions a switch's walk enters, at most


def _enclosing_statement(model: "ModuleModel", node: ast.AST) -> ast.AST | None:
    parent = model.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        parent = model.parents.get(parent)
    return parent


def entry_kernels(project: "Project", model: "ModuleModel") -> list[tuple[str, ast.AST, KernelCall]]:
    """(api, node, kernel) of each entry point of `model`, in `KernelIndex.entries` order. Kept with what
    it read (every call, every function: an edit adding or removing one forgets it), unlike the index,
    found again in every analysis for its interpret marks: the same kernel values from edit to edit."""
    memo = model.eval_cache
    found = memo.get("kernel-entries")
    if found is None:
        index = KernelIndex.__new__(KernelIndex)
        index.project, index.model, index.evaluator = project, model, project.evaluator
        found = reads.kept(memo, "kernel-entries", index._entry_kernels, model.read_key, ("calls", id(model), "*"),
                           ("functions", id(model)))
    return found


def _inside(model: "ModuleModel", node: ast.AST, container: ast.AST) -> bool:
    current = node
    while current is not None:
        if current is container:
            return True
        current = model.parents.get(current)
    return False


def reachable_functions(project: "Project", start: Func, limit: int = 500, exclude: set[int] = frozenset()) -> list[Func]:
    """The body and every user function it can run, across modules, in discovery order; functions whose
    node id is in `exclude` (bodies lowered by another backend, such as a WarpMesh core_map) are not entered.

    Kept with the start's module text: the kernel model and the rules (PAL002's interpreted kernels,
    PAL008's jitted functions) ask for the same walks."""
    key = ("reachable", id(start.node), start.self_value, limit, frozenset(exclude))
    cache = start.model.eval_cache
    found = cache.get(key)
    if found is None:  # it reads what the functions' callees read (`_callees`), nothing else
        found = reads.kept(cache, key, lambda: _reachable_functions(project, start, limit, exclude))
    return list(found)


def _reachable_functions(project: "Project", start: Func, limit: int, exclude: set[int]) -> list[Func]:
    seen: dict[int, Func] = {}
    queue = [start]
    while queue and len(seen) < limit:
        func = queue.pop(0)
        if id(func.node) in seen or id(func.node) in exclude:
            continue
        seen[id(func.node)] = func
        queue.extend(target for target in _callees(project, func) if id(target.node) not in seen)
    return list(seen.values())


def _callees(project: "Project", func: Func) -> list[Func]:
    """What the body of `func` can run, in the order of its nodes: the function each name or
    attribute it loads is (if any), and its nested lambdas and decorated defs (run where they are
    defined); nested functions are not entered. Kept per function (`reads`: an edit elsewhere keeps
    it), so a kernel's reachable functions are found again after an edit without walking them."""
    model = func.model
    key = ("callees", id(func.node))
    memo = model.eval_cache
    found = memo.get(key)
    if found is not None:
        return found
    evaluator = project.evaluator
    found = []
    objects = []  # calls and `with`s: what they run through objects (`call_graph`)
    reads.begin(model.read_key, ("own", id(func.node)))
    try:
        for node in _own_nodes(func.node):
            kind = node.__class__  # by class, not a chain of isinstance: this loop sees every node of every kernel
            if kind is ast.Call or kind is ast.With:
                objects.append(node)
            if kind is ast.Name:
                if node.ctx.__class__ is not ast.Load:
                    continue
                binding = model.lookup(node.id, model.scope_of(node), node.lineno)
                if binding is None or binding.kind not in ("def", "import", "assign", "class"):
                    continue
            elif kind is ast.Attribute:
                if node.ctx.__class__ is not ast.Load or node.attr in _NOT_FUNCTION_ATTRS:
                    continue
            elif kind is ast.Call and node.func.__class__ in (ast.Subscript, ast.Call):
                node = node.func  # `BODIES[name](*refs)`, `getattr(self, f"_{op}_kernel")(*refs)`: what it calls
            else:
                if kind in _FUNCTION_CLASSES and (kind is ast.Lambda or node.decorator_list):
                    found.append(Func(model, node))
                continue
            value = evaluator.value(model, node)
            for option in function_options(value) if isinstance(value, OneOf) else (value,):
                target = unwrap_function(option)  # each function a choice may be (`body = a if c else b`)
                if target is None and isinstance(option, ClassValue) and _called(model, node):
                    target = constructor(option)  # `Flags()`: its `__init__` runs here
                if target is not None:
                    found.append(target)
        found += object_callees(project, func, objects)
    finally:
        read = reads.end()
    memo.keep(key, found, read)
    return found


def _called(model, node: ast.AST) -> bool:
    parent = model.parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node


def constructor(cls: ClassValue) -> Func | None:
    """The `__init__` a call of a workspace class runs (its own, not a base's), bound to a new instance."""
    init = next((s for s in cls.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    return Func(cls.model, init, Instance(cls)) if init is not None else None


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body but the token nodes (`Load`, `Add`); nested functions are yielded but not entered."""
    body = func.body if isinstance(func.body, list) else [func.body]
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, FunctionNode):
            stack.extend(getattr(node, "decorator_list", []))
            continue
        children = child_nodes(node)
        children.reverse()
        stack.extend(children)


def get_global_calls(project: "Project", model: "ModuleModel") -> list[ast.Call]:
    """Calls that resolve to JAX's `get_global`, however it was imported or aliased."""
    return pallas_calls(project, model, "pl.get_global")


def pallas_calls(project: "Project", model: "ModuleModel", api: str) -> list[ast.Call]:
    """Calls that resolve to the JAX function `api` (canonical name, `pl.run_scoped`), however it was
    imported or aliased: `pl.run_scoped(...)`, `run_scoped(...)`, `rs(...)` after `import ... as rs` or
    `rs = pl.run_scoped`. Only calls spelled with its own name or a bare alias name are evaluated."""
    key = ("pallas-calls", api)
    cached = model.eval_cache.get(key)
    if cached is not None:
        return cached
    found = reads.kept(model.eval_cache, key, lambda: _pallas_calls(project, model, api), model.read_key)
    if all(call.bound_by_partials == [] for call in found):
        # An edit of any call of the module may make one an alias of `api`: found again first (`reads.settled`),
        # and what read the calls (every kernel's model asks for its semaphore ops) forgotten only when they differ.
        reads.found_again_by(model.eval_cache.node_of(key), (_pallas_calls_again, project, model, api))
    return found


def _pallas_calls_again(project: "Project", model: "ModuleModel", api: str) -> None:
    if project.holds(model):  # not for a model dropped since
        if any(call.bound_by_partials != [] for call in pallas_calls(project, model, api)):
            model.eval_cache.pop(("pallas-calls", api), None)  # a call now through a partial: what read them is forgotten


def _pallas_calls(project: "Project", model: "ModuleModel", api: str) -> list[ast.Call]:
    result = []
    for call in model.calls_named_or_aliased(api.rsplit(".", 1)[-1]):
        if plain_callee(project, model, call):
            continue
        value = project.evaluator.value(model, call.func)
        if isinstance(partial_api(value), Api) and partial_api(value).name == api:
            # set for every call (an edit keeps the call's node, `model_patch`: not what an earlier text bound)
            call.bound_by_partials = partial_binding(model, value)
            result.append(call)
    return result


def partial_binding(model: "ModuleModel", value: Value) -> list[ast.Call] | None:
    """The `functools.partial(...)` calls of `model` a call through `value` goes through, innermost
    first (their bound arguments come first, the call's own last); [] for none; None when one is no
    call of `model` (a partial of another module binds them: not followed)."""
    partials = []
    while isinstance(value, Partial):
        partials.append(value.node)
        value = value.func
    if not partials:
        return []
    own_calls = model.own_call_ids()
    known = all(isinstance(p, ast.Call) and id(p) in own_calls for p in partials)
    return list(reversed(partials)) if known else None


def partial_api(value: Value) -> Value:
    """The function a chain of `functools.partial` applies (`value` itself when it is none)."""
    while isinstance(value, Partial):
        value = value.func
    return value


_RECORDED = object()


def get_global_arguments(call: ast.Call, partials=_RECORDED) -> tuple[list[ast.expr], list[ast.keyword]] | None:
    """What the get_global call passes, a `functools.partial` alias's bound arguments (`partials`, by
    default as `pallas_calls` recorded them: `partial_binding`) included, as one call would; None
    when a partial of another module binds them."""
    if partials is _RECORDED:
        partials = getattr(call, "bound_by_partials", [])
    if partials is None:
        return None
    positional = [a for p in partials for a in p.args[1:]] + list(call.args)
    keywords = {}
    for keyword in [k for p in partials for k in p.keywords] + list(call.keywords):
        keywords[keyword.arg if keyword.arg is not None else id(keyword)] = keyword
    return positional, list(keywords.values())


def get_global_argument(call: ast.Call, partials=_RECORDED) -> ast.expr | None:
    arguments = get_global_arguments(call, partials)
    if arguments is None:
        return None
    positional, keywords = arguments
    if positional and not isinstance(positional[0], ast.Starred):
        return positional[0]
    for keyword in keywords:
        if keyword.arg == "what":
            return keyword.value
    return None
