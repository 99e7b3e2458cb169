"""What the user means to trace, read from the kernel model; pure (no jax, nothing executed).

A position (or a name) may sit in a kernel body, which JAX calls with refs, never with arrays: the
trace then runs the launch or launches that run that body (a kernel object, a function launching
one, a wrapper around such a function), never the body as a plain function. And a kernel that runs
in interpret mode is traced the way it runs, on the host, unless a platform is asked for.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ..analysis.kernel_model import SC_SCALAR, SC_VECTOR, TPU_TC, kernel_launches, kernel_models
from ..analysis.kernels import FORCE_INTERPRET, SET_INTERPRET, EntryPoint, KernelIndex, reachable_functions
from ..analysis.model import FunctionNode
from ..analysis.values import Api, KernelCall
from .call_args import inferred_call_args
from .targets import TargetArgs, definition_line, function_at

# How a module-level name runs a kernel, in the order a body's launches are looked for.
IS_KERNEL = "kernel"  # `k = plgpu.kernel(body, ...)`, a decorated body: calling it launches
LAUNCHES = "launch"  # its code calls a kernel: `pl.pallas_call(body, ...)(x)`, `k(x)`
WRAPS = "wrapper"  # it calls a module-level function of this module that launches one
BUILDS = "builds"  # it builds a kernel without launching it (a factory)
_RUNNING = (IS_KERNEL, LAUNCHES, WRAPS)
TPU_BACKENDS = (TPU_TC, SC_VECTOR, SC_SCALAR)


@dataclass(eq=False)
class LaunchTarget:
    """A module-level name that can be traced and the kernels (entry points) tracing it runs."""

    name: str
    path: str
    statement: ast.stmt | None  # None: no module-level binding of that name (the trace says so)
    how: str
    kernels: list[EntryPoint] = field(default_factory=list)

    @property
    def line(self) -> int | None:
        """0-based: its first decorator or its def / assignment line."""
        return definition_line(self.statement) if self.statement is not None else None


@dataclass(frozen=True)
class Platform:
    name: str  # "cuda" or "host"
    reason: str  # for the report: why this platform


@dataclass
class Intent:
    """What a request means: the targets to choose from (one: trace it), the kernel body the request
    pointed at (None: it pointed at the target itself), or why nothing can be traced."""

    targets: list[LaunchTarget]
    body: str | None = None  # the kernel body (or the helper of one) the request pointed at
    body_phrase: str | None = None  # what it is, in words: "double (line 10) is a kernel body"
    body_path: str | None = None
    problem: str | None = None

    def describe(self, target: LaunchTarget) -> str | None:
        """Why `target` is traced for a request about a body: said in the report."""
        if self.body is None:
            return None
        place = "" if target.path == self.body_path else f" in {os.path.basename(target.path)}"
        return (f"{self.body_phrase}: traced through {target.name}{place} "
                f"(line {target.line + 1}), which {_HOW[target.how]} it")


_HOW = {IS_KERNEL: "is the kernel that runs", LAUNCHES: "launches the kernel that runs",
        WRAPS: "calls a launch of the kernel that runs"}


def _bound_name(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


def _top_level_statement(model, node: ast.AST) -> ast.stmt | None:
    while node is not None:
        parent = model.parents.get(node)
        if isinstance(parent, ast.Module):
            return node  # type: ignore[return-value]
        node = parent
    return None


def _entries_of(project, kernel: KernelCall) -> list[EntryPoint]:
    return [e for e in KernelIndex.of(project, kernel.model).entries if e.kernel.node is kernel.node]


def launch_targets(project, path: str, text: str) -> list[LaunchTarget]:
    """Every module-level name of the file that launches or builds a kernel, in file order (cached
    with the module text)."""
    model = project.model(path, text)
    if model.tree is None:
        return []
    cached = model.eval_cache.get("launch-targets")
    if cached is not None:
        return cached
    index = KernelIndex.of(project, model)
    targets: dict[str, LaunchTarget] = {}

    def add(stmt: ast.stmt, how: str, kernels: list[EntryPoint]) -> None:
        name = _bound_name(stmt)
        if name is None:
            return
        target = targets.get(name)
        if target is None or target.statement is not stmt:
            target = targets[name] = LaunchTarget(name, model.path, stmt, how)
        elif _RANK[how] < _RANK[target.how]:
            target.how = how
        target.kernels.extend(k for k in kernels if k not in target.kernels)

    for stmt in model.tree.body:  # the kernel objects themselves
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kernels = [e for e in index.entries if e.node in stmt.decorator_list]
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            value = project.evaluator.value(model, stmt.value)
            kernels = _entries_of(project, value) if isinstance(value, KernelCall) and value.body is not None else []
        else:
            kernels = []
        if kernels:
            add(stmt, IS_KERNEL, kernels)
    for launch in kernel_launches(project, model):
        stmt = _top_level_statement(model, launch.call)
        if stmt is not None:
            add(stmt, LAUNCHES, _entries_of(project, launch.kernel))
    for entry in index.entries:
        stmt = _top_level_statement(model, entry.node)
        if stmt is not None and _bound_name(stmt) not in targets:
            add(stmt, BUILDS, [entry])
    changed = True
    while changed:  # wrappers calling a launching function of this module, transitively
        changed = False
        running = {name: t for name, t in targets.items() if t.how in _RUNNING}
        for stmt in model.tree.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.name in running:
                continue
            called = [running[n.func.id] for n in ast.walk(stmt) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name) and n.func.id in running]
            if called:
                add(stmt, WRAPS, [k for t in called for k in t.kernels])
                changed = True
    found = sorted(targets.values(), key=lambda t: t.line)
    model.eval_cache["launch-targets"] = found
    return found


_RANK = {IS_KERNEL: 0, LAUNCHES: 1, WRAPS: 2, BUILDS: 3}


# ---- a position or a name ---------------------------------------------------------------------------

def _enclosing_defs(model, line: int) -> list[ast.AST]:
    """The functions whose lines hold 0-based `line` (decorators included), innermost first."""
    found = [f for f in model.functions
             if definition_line(f) <= line <= (getattr(f, "end_lineno", None) or f.lineno) - 1]
    return sorted(found, key=lambda f: -f.lineno)


def _kernels_reaching(project, model, defs: list[ast.AST]) -> list[EntryPoint]:
    """Entry points (of this module, else of the workspace modules importing it) whose code
    reaches one of `defs`: their bodies, helpers, nested `pl.when` bodies."""
    wanted = {id(d) for d in defs}
    for models in ([model], project.importers(model)):
        found = []
        for other in models:
            for entry in KernelIndex.of(project, other).entries:
                if entry.body is not None and any(id(f.node) in wanted for f in reachable_functions(project, entry.body)):
                    found.append(entry)
        if found:
            return found
    return []


def _body_phrase(defs: list[ast.AST], kernels: list[EntryPoint]) -> tuple[str, str]:
    """(name, what it is): the body the position is in, else the kernel code (a helper) it is in."""
    bodies = [e.body.node for e in kernels if e.body is not None]
    for func in defs:
        if func in bodies:
            return _name(func), f"{_name(func)} (line {definition_line(func) + 1}) is a kernel body"
    named = next((f for f in defs if _name(f) not in ("_", "<lambda>")), defs[0])
    names = ", ".join(dict.fromkeys(_name(b) for b in bodies))
    return _name(named), f"{_name(named)} (line {definition_line(named) + 1}) is kernel code (reached from the body {names})"


def _name(func: ast.AST) -> str:
    return getattr(func, "name", "<lambda>")


def _launches_of(project, model, kernels: list[EntryPoint]) -> list[LaunchTarget]:
    """The targets that run `kernels`: the kernel objects, else the functions launching them, else wrappers."""
    paths = {e.model.path: e.model for e in kernels}
    candidates = [t for m in ([model] + [m for p, m in paths.items() if p != model.path])
                  for t in launch_targets(project, m.path, m.text) if any(k in t.kernels for k in kernels)]
    for how in _RUNNING:
        chosen = [t for t in candidates if t.how == how]
        if chosen:
            return chosen
    return []


def intent_at(project, path: str, text: str, line: int) -> Intent:
    """What a request at 0-based `line` of the file means."""
    model = project.model(path, text)
    if model.tree is None:
        return Intent([], problem=f"{os.path.basename(path)} does not parse")
    defs = [d for d in _enclosing_defs(model, line) if isinstance(d, FunctionNode)]
    kernels = _kernels_reaching(project, model, defs) if defs else []
    targets = launch_targets(project, path, text)
    if kernels:
        return _body_intent(project, model, defs, kernels)
    name = function_at(text, line)
    if name is None:
        return Intent([], problem=f"no module-level function at line {line + 1} in {os.path.basename(path)}")
    return _plain(targets, name, model)


def intent_for_name(project, path: str, text: str, name: str) -> Intent:
    """What `PATH::name` means: the name itself, unless it is a kernel body that is no kernel of its own
    (a helper the body calls, named, is traced as itself: it may well take arrays)."""
    model = project.model(path, text)
    targets = launch_targets(project, path, text) if model.tree is not None else []
    if model.tree is not None and "." not in name:
        named = next((t for t in targets if t.name == name), None)
        if named is None or named.how == BUILDS:
            defs = [f for f in model.tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == name]
            kernels = _kernels_reaching(project, model, defs[-1:]) if defs else []
            if any(e.body is not None and e.body.node is defs[-1] for e in kernels):
                return _body_intent(project, model, defs[-1:], kernels)
    return _plain(targets, name, model)


def _plain(targets: list[LaunchTarget], name: str, model) -> Intent:
    """`name` traced as it is (a launch, or a function the analysis sees no kernel in)."""
    known = next((t for t in targets if t.name == name), None)
    if known is None:
        stmt = next((s for s in reversed(model.tree.body) if _bound_name(s) == name), None) if model.tree else None
        known = LaunchTarget(name, model.path, stmt, BUILDS)
    return Intent([known])


def _body_intent(project, model, defs, kernels) -> Intent:
    body, phrase = _body_phrase(defs, kernels)
    launches = _launches_of(project, model, kernels)
    if launches and all(isinstance(t.statement, FunctionNode) and t.statement in defs for t in launches):
        return Intent(launches)  # a decorated body is its own kernel: tracing it is tracing the launch
    intent = Intent(launches, body=body, body_phrase=phrase, body_path=model.path)
    if not launches:
        intent.problem = (f"{phrase}, which JAX calls with refs, not arrays, and no module-level function or "
                          "name that launches its kernel was found: trace the function that launches it, by name")
    return intent


# ---- the platform -----------------------------------------------------------------------------------

def _under_main_guard(model, node: ast.AST) -> bool:
    while node is not None:
        node = model.parents.get(node)
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test)):
            return True
    return False


def _is_mode_switch(project, site) -> bool:
    """A `with force_*_interpret_mode()` or `set_*_interpret_mode(...)`, not an `interpret=` of the kernel."""
    node = site.node
    if not isinstance(node, ast.Call):
        return False
    value = project.evaluator.value(site.model, node.func)
    return isinstance(value, Api) and value.name in FORCE_INTERPRET | SET_INTERPRET


def _interpret_site(project, target: LaunchTarget, entry: EntryPoint):
    """What makes `entry` run interpreted when `target` is traced: its own `interpret=`, or a mode
    switch the trace also runs (at module level on import, or inside the target); None if none."""
    for site in entry.interpret:
        if not _is_mode_switch(project, site):
            return site
        inside = _top_level_statement(site.model, site.node) is target.statement
        at_import = (site.model.enclosing_function(site.node) is None and not _under_main_guard(site.model, site.node)
                     and site.model.path == target.path)
        if inside or at_import:
            return site
    return None


def platform_for(project, target: LaunchTarget) -> Platform:
    """`host` when every kernel the target runs is interpreted (JAX then runs it on the CPU, and a
    `cuda` lowering only fails with a platform mismatch); `tpu` when every one is a TPU kernel;
    `cuda` otherwise."""
    if not target.kernels:
        return Platform("cuda", "cuda: the default (the analysis sees no kernel it runs, interpreted or not)")
    sites = [(_interpret_site(project, target, e), e) for e in target.kernels]
    interpreted = [(s, e) for s, e in sites if s is not None]
    if interpreted and len(interpreted) == len(sites):
        site, _ = interpreted[0]
        line = getattr(site.node, "lineno", None)
        where = f" (line {line})" if line else ""
        return Platform("host", f"host: the kernel runs in interpret mode, {site.reason}{where}, so it is traced "
                                "as it runs, on the CPU (platform cuda lowers it for a GPU instead)")
    if interpreted:
        return Platform("cuda", "cuda: some of its kernels run in interpret mode and some compiled; lowered for "
                                "the GPU, where the interpreted ones cannot lower (platform host runs those)")
    tpu = _tpu_reason(project, target)
    if tpu is not None:
        return Platform("tpu", f"tpu: the kernel is a TPU one ({tpu}), cross-lowered where there is no TPU")
    maybe = [s for e in target.kernels for s in e.maybe_interpret]
    if maybe:
        return Platform("cuda", f"cuda: whether it runs interpreted is decided when it runs ({maybe[0].reason}); "
                                "lowered for the GPU (platform host traces it interpreted)")
    return Platform("cuda", "cuda: the kernel is compiled for a GPU (cross-lowered where there is none)")


def _tpu_reason(project, target: LaunchTarget) -> str | None:
    """Why every kernel the target runs lowers for a TPU (the kernel model's backend), or None."""
    models = {id(m.entry.node): m for e in target.kernels for m in kernel_models(project, e.model)}
    found = [models.get(id(e.node)) for e in target.kernels]
    if found and all(m is not None and m.backend in TPU_BACKENDS for m in found):
        return found[0].backend_reason
    return None


@dataclass
class TracePlan:
    """A request resolved: the name to trace and its platform, or the launches to choose from, or why not."""

    intent: Intent
    target: LaunchTarget | None = None
    platform: Platform | None = None
    infer_args: Callable[[], TargetArgs | None] | None = None  # arguments from a call, as hovers read it

    @property
    def function(self) -> str | None:
        return self.target.name if self.target is not None else None

    @property
    def choices(self) -> list[LaunchTarget]:
        return self.intent.targets if self.target is None and len(self.intent.targets) > 1 else []

    def annotate(self, result: dict) -> dict:
        """What the report says about the choice: which platform and why, and which launch of a body."""
        if self.platform is not None:
            result["platform_reason"] = self.platform.reason
        because = self.intent.describe(self.target) if self.target is not None else None
        if because:
            result["traced_because"] = because
            result["kernel_body"] = self.intent.body
        return result

    def choice_message(self) -> str:
        return (f"{self.intent.body_phrase}, run by {len(self.choices)} launches: "
                + ", ".join(f"{t.name} (line {t.line + 1})" for t in self.choices))


def unanalysed_plan(path: str, where: str | int, platform: str | None, why: str) -> TracePlan:
    """Without the kernel model (it could not be built): a name is traced as named, a line is not."""
    if isinstance(where, int):
        return TracePlan(Intent([], problem=f"cannot tell which function line {where + 1} is in: {why}"))
    target = LaunchTarget(where, path, None, "")
    return TracePlan(Intent([target]), target, Platform(platform or "cuda", f"{platform or 'cuda'}: {why}"))


def plan_trace(project, path: str, text: str, where: str | int, platform: str | None = None,
               asked_by: str = "--platform", choice: str | None = None) -> TracePlan:
    """`where` (a name or a 0-based line) resolved to what runs; `platform` None: as the kernel runs.
    `choice` picks one of several launches of a body by name."""
    intent = intent_at(project, path, text, where) if isinstance(where, int) else intent_for_name(project, path, text, where)
    targets = intent.targets
    if choice is not None:
        targets = [t for t in targets if t.name == choice]
    plan = TracePlan(intent)
    if len(targets) != 1 or intent.problem:
        return plan
    plan.target = targets[0]
    plan.infer_args = lambda: inferred_call_args(project, path, text, plan.target.name)
    plan.platform = (Platform(platform, f"{platform}: asked for ({asked_by})") if platform
                     else platform_for(project, plan.target))
    return plan

