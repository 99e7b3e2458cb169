"""Static evaluation of expressions to abstract values.

Names are followed through the module's bindings; imports are resolved by jedi against the analysed environment
(falling back to the import statement itself when jedi cannot answer); calls into user helpers evaluate their
`return`s with the arguments bound; parameters take the values their call sites (`functools.partial` too) pass.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import logging
from typing import TYPE_CHECKING

from . import reads
from .arithmetic import binop, bounded, constant, fits
from .array_transforms import TRANSFORMS, transformed
from .arrays import ARRAYS, FROM_DATA, LIKE_ARRAYS, array_from_data, array_attribute, array_value, dtype_name, shape_of
from .call_sites import TRANSPARENT_WRAPPERS, argument_sites
from .chosen_bodies import either_function, function_choice, getattr_value, looked_up_function
from .class_attributes import ClassAttributes, declared_instance, declared_of, replaced
from .classes import enum_length, is_enum
from .grown_lists import grown_list
from .iteration import comprehension_of, loop_variable
from .frames import Frame, one_of as _one_of, terminal_name
from .comparisons import BUILTINS, INTEGER_HELPERS, as_sequence, bool_op, compare, taken_bindings
from .launch_wrappers import (body_launcher, forwarded_call, kernel_around_body, lifted_kernel, lifted_pallas_call,
                              rehome)
from .lazy_arguments import forced, lazily_callable, lazy_return
from .model import ModuleModel
from .names import canonical
from .partial_keywords import keywords_of_partial
from .shape_structs import evaluated_shape
from .single_dispatch import dispatched_call, dispatches
from .returns import COMPARISONS as _COMPARISONS, reachable_returns
from .reaching import declared_instead, mutates, outside_own_statement, popped_keys, reaching_bindings
from .values import (
    UNKNOWN,
    Api,
    Array,
    ClassValue,
    Const,
    Func,
    Instance,
    InterpretParams,
    KernelCall,
    KeyedChoice,
    Mapping,
    MemType,
    ModuleValue,
    OneOf,
    Partial,
    SemaphoreArray,
    SemaphoreRef,
    Seq,
    ShapeDtype,
    Spec,
    Super,
    Value,
)

if TYPE_CHECKING:
    from .model import Binding
    from .project import Project

log = logging.getLogger(__name__)

MAX_CALL_DEPTH = 5
# Evaluation steps one top-level question may take. Helpers calling helpers can branch
# exponentially; past this budget the answer is "unknown", never a guess.
STEP_BUDGET = 20_000
# Distinct values a parameter takes from its call sites, at most (more: unknown).
MAX_CALL_SITE_OPTIONS = 256

# `plgpu.warp_map(f)` (also a decorator) runs `f` at once, at warp level: a warp region, as a WarpMesh core_map.
KERNEL_FACTORIES = {"pl.pallas_call", "plgpu.kernel", "pl.kernel", "pl.core_map", "plgpu.warp_map"}
# Where each factory takes its body, positionally and by keyword.
_BODY_ARG = {"pl.pallas_call": "kernel", "plgpu.kernel": "body", "pl.kernel": "body", "pl.core_map": None,
             "plgpu.warp_map": "f"}

# Memory-space constructors called as `X(shape, dtype)`, with JAX's spelling of the space.
_SHAPED_TYPES = {
    "plgpu.GMEM": "gmem",
    "plgpu.SMEM": "smem",
    "plgpu.TMEM": "tmem",
    "plgpu.WGMMAAccumulatorRef": "regs",
    "pl.ANY": "any",
    "pltpu.VMEM": "vmem",
    "pltpu.SMEM": "smem",
    "pltpu.HBM": "hbm",
    "pltpu.VMEM_SHARED": "vmem_shared",
    "pltpu.SEMAPHORE": "semaphore_mem",
}
# Semaphore types: bare, or called with a shape.
_SEMAPHORES = {
    "plgpu.SemaphoreType.REGULAR": ("gmem", "semaphore"),
    "plgpu.SemaphoreType.BARRIER": ("gmem", "barrier_semaphore"),
    "pltpu.SemaphoreType.REGULAR": ("semaphore_mem", "semaphore"),
    "pltpu.SemaphoreType.DMA": ("semaphore_mem", "dma_sem"),
    "pltpu.SemaphoreType.BARRIER": ("semaphore_mem", "barrier_semaphore"),
}
_BARRIERS = {"plgpu.Barrier": "barrier", "plgpu.ClusterBarrier": "cluster_barrier"}
_INTERPRET_PARAMS = {"plgpu.InterpretGPUParams", "pltpu.InterpretParams"}
# Decorators whose method is read as an attribute: `plan.workspace` is what the method returns.

# Specs by constructor: their parameters in order (jax/_src/pallas/core.py, mosaic/core.py).
_SPECS = {
    "pl.BlockSpec": ("block_shape", "index_map", "memory_space", "pipeline_mode"),
    "pl.GridSpec": ("grid", "in_specs", "out_specs", "scratch_shapes"),
    "pltpu.PrefetchScalarGridSpec": ("num_scalar_prefetch", "grid", "in_specs", "out_specs", "scratch_shapes"),
    "plgpu.BlockSpec": ("block_shape", "index_map", "memory_space", "pipeline_mode"),
}
# Wrappers whose result calls the function they wrap with the same arguments (for call sites:
# `jax.jit(f)(x)`, `jax.jit(f).trace(x)`, `jax.eval_shape(f, x)`).


NOT_STATIC = "<not static>"
_NOT_KEPT = object()


def static_value(value: Value):
    """The Python value of a constant (tuples of constants too), else NOT_STATIC."""
    if isinstance(value, Const):
        return value.value
    if isinstance(value, Seq):
        items = tuple(static_value(item) for item in value.items)
        return NOT_STATIC if NOT_STATIC in items else items
    if isinstance(value, Api):
        return value.name
    return NOT_STATIC


def _details(kwargs: dict[str, Value], leave_out: tuple[str, ...]) -> tuple:
    return tuple(sorted((key, static_value(value)) for key, value in kwargs.items() if key not in leave_out))


def as_memtype(value: Value, source: str = "") -> Value:
    """Bare semaphore enum members (`plgpu.SemaphoreType.REGULAR`) are memory types of shape ()."""
    if isinstance(value, Api) and value.name in _SEMAPHORES:
        space, dtype = _SEMAPHORES[value.name]
        return MemType(space, (), dtype, source or value.name, value.name)
    return value


class Evaluator(ClassAttributes):
    def __init__(self, project: "Project"):
        self.project = project
        self._active: set[tuple] = set()
        self._nesting = 0
        self._steps = 0
        self._cut = 0  # answers made UNKNOWN by where they were asked (a cycle, the step budget, the depth)
        self.in_own_module_only = False  # see `own_module_call_sites`
        self.params_read: dict[int, tuple[str, ...]] = {}  # per function: the parameters its returns read (`lazy_return`)

    def depth(self) -> tuple[int, int]:
        """How many evaluations are in progress (expressions, parameters' call sites): the same at two
        questions, one inside the other, when nothing was evaluated between them (`ImportCycle`)."""
        return self._nesting, len(self._active)

    @contextlib.contextmanager
    def own_module_call_sites(self):
        """Meanwhile a parameter's call sites are looked for in its function's own module only, not in the
        modules importing it, with the answers kept apart from the full evaluation's (`ModuleModel.evaluating_in`).

        For the kernel search in the importers of an analysed module (rules about any semaphore): following
        each callee's parameters there into other modules' call sites modelled most of a package (jax's
        `mlir.py` imports Pallas' `mosaic/core.py`; its `ctx.aval_to_ir_types_cache.get(...)` asks for `ctx`
        from every call site of `_aval_to_ir_types`, and so on through `jax/_src`): 113 models, 342 MiB."""
        if self.in_own_module_only:
            yield
            return
        self.in_own_module_only = True
        try:
            with ModuleModel.evaluating_in("own-module call sites"):
                yield
        finally:
            self.in_own_module_only = False

    # ---- entry points -------------------------------------------------------------------------

    def value(self, model: "ModuleModel", expr: ast.AST, frame: Frame | None = None) -> Value:
        cache = model.eval_cache
        if frame is None:
            key = (id(expr), None)
            found = cache.hit(key, _NOT_KEPT)  # one look-up for the answers already kept (a third of the questions)
            if found is not _NOT_KEPT:
                return found
        else:
            key = (id(expr), id(frame))
        if key in self._active:
            self._cut += 1
            return UNKNOWN
        if self._nesting == 0:
            self._steps = 0
        self._steps += 1
        if self._steps > STEP_BUDGET:
            self._cut += 1
            return UNKNOWN
        read = reads.current()
        if frame is not None and frame.memo is not None:
            found = frame.memo.get(id(expr))
            if found is not None and found[1] is read and found[3] == self.in_own_module_only:  # its reads noted here
                self._steps += found[2]  # as if worked out again
                return found[0]
            steps, cut = self._steps, self._cut
        self._active.add(key)
        self._nesting += 1
        kept = begun = False
        asked_in = read
        try:  # from here: a RecursionError anywhere below leaves the nesting count as it found it
            kept = frame is None and reads.tracking()  # an answer kept: what it reads is collected apart (`reads`)
            if read is not None:
                region = ("own", id(model.scope_of(expr)))  # the function (class, module) whose own code it is
                if kept:
                    reads.begin(model.read_key, region)
                    begun = True
                else:
                    read.add(model.read_key)
                    read.add(region)
            result = bounded(self._eval(model, expr, frame))  # `b = (a, a)` 40 times over: 2**40 values
        except RecursionError:
            self._cut += 1
            result = UNKNOWN
        finally:
            self._nesting -= 1
            self._active.discard(key)
            read = reads.end() if kept and begun else None
        if frame is not None and frame.memo is not None and self._cut == cut and self._steps <= STEP_BUDGET:
            frame.memo[id(expr)] = (result, asked_in, self._steps - steps, self.in_own_module_only)
        if frame is None and self._steps <= STEP_BUDGET:
            cache.keep(key, result, read)  # an edit of what it read finds it again first (`reads.settled`)
            reads.found_again_by(read, (_found_again, self, self.in_own_module_only, Evaluator.value, model, expr))
        return result

    # ---- expressions --------------------------------------------------------------------------

    def _eval(self, model: "ModuleModel", expr: ast.AST, frame: Frame | None) -> Value:
        if isinstance(expr, ast.Constant):
            return constant(expr.value)
        if isinstance(expr, (ast.Tuple, ast.List)):
            items = self._items(model, expr.elts, frame)
            return UNKNOWN if items is None else Seq(tuple(items))
        if isinstance(expr, ast.Name):
            return self._name(model, expr, frame)
        if isinstance(expr, ast.Attribute):
            return self.attribute(model, self.value(model, expr.value, frame), expr.attr)
        if isinstance(expr, ast.Call):
            return self._call_expr(model, expr, frame)
        if isinstance(expr, ast.Subscript):
            return self._subscript(model, expr, frame)
        if isinstance(expr, ast.BinOp):
            return self._binop(model, expr, frame)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            operand = self.value(model, expr.operand, frame)
            if isinstance(operand, Const) and isinstance(operand.value, (int, float)):
                return Const(-operand.value)
            return UNKNOWN
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            operand = self.value(model, expr.operand, frame)
            return Const(not operand.value) if isinstance(operand, Const) else UNKNOWN
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _COMPARISONS:
            left, right = self.value(model, expr.left, frame), self.value(model, expr.comparators[0], frame)
            if isinstance(left, Const) and isinstance(right, Const):
                return Const(_COMPARISONS[type(expr.ops[0])](left.value, right.value))
            if isinstance(left, Instance) and left.member and isinstance(right, Instance):  # `self == Sync.TILE`
                return compare(expr, lambda part: self.value(model, part, frame)) or UNKNOWN
            return UNKNOWN
        if isinstance(expr, ast.IfExp):
            test = self.value(model, expr.test, frame)
            if isinstance(test, Const):
                return self.value(model, expr.body if test.value else expr.orelse, frame)
            body, orelse = self.value(model, expr.body, frame), self.value(model, expr.orelse, frame)
            return body if body == orelse else function_choice((body, orelse))  # `a if flag else b`: either body
        if isinstance(expr, ast.Lambda):
            return Func(model, expr)
        if isinstance(expr, ast.Dict):
            keys = self._dict_keys(model, expr, frame)
            if keys is not None:
                return Mapping(tuple((k, self.value(model, v, frame)) for k, v in zip(keys, expr.values)))
            return UNKNOWN
        if isinstance(expr, ast.NamedExpr):
            return self.value(model, expr.value, frame)
        if isinstance(expr, ast.Compare):
            return compare(expr, lambda part: self.value(model, part, frame)) or UNKNOWN
        if isinstance(expr, ast.BoolOp):
            found = bool_op(expr, lambda part: self.value(model, part, frame))
            return found if found is not UNKNOWN else either_function(expr, lambda part: self.value(model, part, frame))
        return UNKNOWN

    def _dict_keys(self, model: "ModuleModel", expr: ast.Dict, frame: Frame | None) -> list | None:
        """The keys of a dict display, each a constant or a name standing for one (a class constant, an
        `enum.Enum` member: `{Backend.GPU: ...}` is looked up as `table[Backend.GPU]`, both sides folded the
        same way); None where one is not known statically or is a `**spread`."""
        keys = []
        for key in expr.keys:
            if isinstance(key, ast.Constant):
                found = key.value
            elif key is None or isinstance(key, (ast.Dict, ast.List, ast.Set)):
                return None
            else:
                found = _key_of(self.value(model, key, frame))
                if found is None:
                    return None
            if not fits(found):
                return None
            keys.append(found)
        return keys

    def _items(self, model: "ModuleModel", elements: list[ast.expr], frame: Frame | None) -> list[Value] | None:
        """The values of a display's or a call's positional elements, `*xs` spliced where `xs` is a known
        sequence; None where a starred one is not."""
        items: list[Value] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                spread = as_sequence(self.value(model, element.value, frame))
                if spread is None:
                    return None
                items.extend(spread.items)
            else:
                items.append(self.value(model, element, frame))
        return items

    def _name(self, model: "ModuleModel", node: ast.Name, frame: Frame | None) -> Value:
        clause = comprehension_of(model.parents, node)
        if clause is not None:  # `{name: pl.get_global(kind) for name, kind in self.smem.items()}`
            return loop_variable(lambda e: self.value(model, e, frame), _one_of, clause.target, clause.iter, node.id)
        scope = model.scope_of(node)
        binding = model.lookup(node.id, scope, node.lineno)
        if binding is None:
            return self.project.resolver.unbound_name(model, node)
        binding = outside_own_statement(model, binding, node, scope)
        if binding is None:
            return UNKNOWN
        reaching = reaching_bindings(model, binding, node, scope)
        reaching = taken_bindings(self, model, reaching, node, scope, frame)  # `if out_dtype is None: out_dtype = x.dtype`
        # `acc = f32` then `if ...: acc = i32`: either may reach the use
        value = _one_of(_first(grown_list(self, model, b, node, scope, frame), self.binding_value, model, b, frame,
                               node.id) for b in reaching)
        if value is UNKNOWN:  # what runs is unknown: an `if TYPE_CHECKING:` may declare what it is
            declared = [d for b in reaching for d in declared_instead(model, node.id, b)]
            runs = [b for b in reaching if b not in declared]
            if declared and all(self.binding_value(model, b, frame) is UNKNOWN for b in runs):
                return _one_of(self.binding_value(model, b, frame) for b in declared)
        return value

    def binding_value(self, model: "ModuleModel", binding: "Binding", frame: Frame | None,
                      name: str | None = None) -> Value:
        if binding.kind == "param":
            func = model.parents[model.parents[binding.node]]  # arg -> arguments -> function
            if frame is not None and frame.func is func:
                return forced(frame.params.get(binding.node.arg, UNKNOWN))
            receiver = self.method_receiver(model, func, binding.node)
            if receiver is not None:
                return receiver
            passed = self.param_from_call_sites(model, func, binding.node.arg)
            return passed if passed is not UNKNOWN else declared_instance(self, model, binding.node)
        if binding.kind == "assign":
            owner = model.scope_of(binding.node)
            inner = frame if frame is not None and frame.func is owner else None
            value = self.value(model, binding.value, inner)
            if isinstance(value, (Seq, Mapping)) and not isinstance(binding.value, ast.Tuple) \
                    and mutates(model, owner, _bound_names(binding.node)):
                return UNKNOWN  # `specs = []` and then `specs.append(...)`: a list, no longer the one it was made as
            return value
        if binding.kind == "unpack":
            owner = model.scope_of(binding.node)
            inner = frame if frame is not None and frame.func is owner else None
            whole = self.value(model, binding.value, inner)
            index, count = binding.index
            return _one_of(option.items[index] if isinstance(option, Seq) and len(option.items) == count else UNKNOWN
                           for option in (whole.options if isinstance(whole, OneOf) else (whole,)))
        if binding.kind == "def":
            return Func(model, binding.node)
        if binding.kind == "class":
            return ClassValue(model, binding.node)
        if binding.kind == "import":
            return self.project.resolver.import_value(model, binding)
        if binding.kind == "other" and isinstance(binding.node, ast.For) and (
                name is not None or isinstance(binding.node.target, ast.Name)):
            # `for interpret in (True, False):`, `for name, kind in SEMS.items():` each item in turn.
            owner = model.scope_of(binding.node)
            inner = frame if frame is not None and frame.func is owner else None
            return loop_variable(lambda e: self.value(model, e, inner), _one_of, binding.node.target,
                                 binding.node.iter, name or binding.node.target.id)
        return UNKNOWN

    def method_receiver(self, model: "ModuleModel", func: ast.AST, arg: ast.arg) -> Value | None:
        """`self` of a plain method is an instance of its class (`cls` of a classmethod, the class)."""
        cls = model.enclosing_class(func)
        if cls is None or isinstance(func, ast.Lambda):
            return None
        reads.note(("own", id(cls)))  # the method's signature and decorators
        positional = [*func.args.posonlyargs, *func.args.args]
        if not positional or positional[0] is not arg:
            return None
        decorators = {terminal_name(d) for d in func.decorator_list}
        if "staticmethod" in decorators:
            return None
        if "classmethod" in decorators:
            return ClassValue(model, cls)
        return Instance(ClassValue(model, cls))

    def attribute(self, model: "ModuleModel", base: Value, attr: str) -> Value:
        if isinstance(base, OneOf):
            return _one_of(self.attribute(model, option, attr) for option in base.options)
        if isinstance(base, (Array, ShapeDtype)):
            return array_attribute(base, attr)
        if isinstance(base, Api):
            return _api_attribute(base.name, attr)
        if isinstance(base, ModuleValue):
            binding = base.model.module_binding(attr)
            if binding is not None:
                return self.binding_value(base.model, binding, None)
            sub = self.project.resolver.submodule(base.model, attr)
            return sub if sub is not None else UNKNOWN
        if isinstance(base, Instance):
            return self._instance_attribute(base, attr)
        if isinstance(base, SemaphoreRef) and attr == "at" and not base.indexer:
            return SemaphoreRef(base.shape, base.source, indexer=True)
        if isinstance(base, ClassValue):
            return self._class_attribute(base, attr, None)
        if isinstance(base, Super):
            return self._bases_attribute(base.cls, attr, base.receiver if isinstance(base.receiver, Instance) else None)
        return UNKNOWN

    def _super(self, model: "ModuleModel", node: ast.Call, frame: Frame | None) -> Value:
        """`super()` in a method: its class, and the method's first parameter as it is bound here."""
        method = model.enclosing_function(node)
        cls = model.enclosing_class(method) if method is not None else None
        positional = [*method.args.posonlyargs, *method.args.args] if isinstance(method, ast.FunctionDef) else []
        if cls is None or not positional:
            return UNKNOWN
        first = positional[0]
        if frame is not None and frame.func is method:
            receiver = forced(frame.params.get(first.arg, UNKNOWN))
        else:
            receiver = self.method_receiver(model, method, first) or UNKNOWN
        return Super(ClassValue(model, cls), receiver) if isinstance(receiver, (Instance, ClassValue)) else UNKNOWN

    def _subscript(self, model: "ModuleModel", expr: ast.Subscript, frame: Frame | None) -> Value:
        base = self.value(model, expr.value, frame)
        if isinstance(expr.slice, ast.Slice):
            bounds = [self.value(model, b, frame) if b is not None else Const(None)
                      for b in (expr.slice.lower, expr.slice.upper, expr.slice.step)]
            if isinstance(base, Seq) and all(isinstance(b, Const) and (b.value is None or type(b.value) is int)
                                             for b in bounds):
                return Seq(base.items[slice(*(b.value for b in bounds))])
            return UNKNOWN
        index = self.value(model, expr.slice, frame)
        if isinstance(base, OneOf) and isinstance(index, Const):
            return _one_of(_item(option, index.value) for option in base.options)
        if isinstance(base, Seq) and isinstance(index, Const) and type(index.value) is int:
            try:
                return base.items[index.value]
            except IndexError:
                return UNKNOWN
        if isinstance(base, Mapping) and _key_of(index) is not None:
            found = base.get(_key_of(index))
            return found if found is not None else UNKNOWN
        if isinstance(base, Mapping) and isinstance(index, OneOf):  # `STAGING[self.op]`, `op` one of several keys
            found = [base.get(o.value) if isinstance(o, Const) else None for o in index.options]
            return UNKNOWN if None in found else _one_of(found)
        if isinstance(base, (Mapping, Seq)) and not isinstance(index, Const):  # `BODIES[name]`: one of the bodies
            found = looked_up_function(base, index)
            if found is not UNKNOWN:
                return found
        if not isinstance(index, OneOf) and _key_of(index) is None:  # `BODIES[jnp.dtype(x.dtype)]`
            picked = self._function_picked(model, expr.value, base, frame)
            if picked is not None:
                return picked
        if isinstance(base, SemaphoreRef) and base.indexer:  # `sems.at[0]`: a view, still a ref
            return SemaphoreRef(None, model.segment(expr))
        if isinstance(base, SemaphoreRef):  # reading a ref (`sems[...]`, `sems[0]`) gives an array
            return SemaphoreArray(base, model.segment(expr))
        return UNKNOWN

    def _function_picked(self, model: "ModuleModel", table: ast.expr, base: Value, frame: Frame | None) -> Value | None:
        """A function picked by a key known only at run time (a kernel body by dtype) from a dict display whose keys
        do not fold (a Mapping of functions is looked_up_function's): any of them, as JAX traces whichever is
        picked; None where the table is not a dict display of functions."""
        if isinstance(base, Mapping):
            return None
        binding = model.lookup(table.id, model.scope_of(table), table.lineno) if isinstance(table, ast.Name) else None
        display = binding.value if binding is not None and binding.kind == "assign" else None
        if not isinstance(display, ast.Dict) or None in display.keys:
            return None
        values = [self.value(model, value, frame) for value in display.values]
        if not values or not all(isinstance(value, Func) for value in values):
            return None
        return _one_of(values)

    def _binop(self, model: "ModuleModel", expr: ast.BinOp, frame: Frame | None) -> Value:
        """Folded within bounds (analysis/arithmetic.py): `10 ** 10 ** 10` is unknown, never computed."""
        left, right = self.value(model, expr.left, frame), self.value(model, expr.right, frame)
        if isinstance(left, OneOf) and isinstance(right, Const):
            return _one_of(binop(expr.op, option, right) for option in left.options)
        return binop(expr.op, left, right)

    # ---- calls --------------------------------------------------------------------------------

    def _call_expr(self, model: "ModuleModel", node: ast.Call, frame: Frame | None) -> Value:
        if isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args and \
                model.lookup("dict", model.scope_of(node), node.lineno) is None:  # `dict(sem=...)`
            if any(k.arg is None for k in node.keywords):
                return UNKNOWN
            return Mapping(tuple((k.arg, self.value(model, k.value, frame)) for k in node.keywords))
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args and not node.keywords \
                and model.lookup("super", model.scope_of(node), node.lineno) is None:
            return self._super(model, node, frame)
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and model.lookup("getattr", model.scope_of(node), node.lineno) is None:
            return getattr_value(self, model, node, frame)  # `getattr(self, f"_{name}_kernel")`
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1 and \
                isinstance(cls := self.value(model, node.args[0], frame), ClassValue) and is_enum(self, cls):
            return enum_length(self, cls)  # `NUM_STAGES = len(Stage)`
        if isinstance(node.func, ast.Name) and node.func.id in BUILTINS and not node.keywords \
                and not any(isinstance(a, ast.Starred) for a in node.args) \
                and model.lookup(node.func.id, model.scope_of(node), node.lineno) is None:
            return BUILTINS[node.func.id]([self.value(model, a, frame) for a in node.args])
        func = self.value(model, node.func, frame)
        if func is UNKNOWN or (func.__class__ is Api and func.name not in _CALLS_READ):
            # An API whose calls give nothing known (`jnp.dot(a, b)`, `lax.fori_loop(...)`): its
            # arguments are not evaluated for it (a helper's returns through every frame they reach).
            return UNKNOWN
        depth = frame.depth if frame else 0
        if lazily_callable(func, node) and depth < MAX_CALL_DEPTH and body_launcher(func.node) is None \
                and lifted_pallas_call(func.node) is None and not dispatches(func):
            return self._function_result(model, func, node, lazy_return(self, model, func, node, frame, depth + 1))
        complete = True  # every argument is known to be there: `*xs` and `**options` of known sequences and dicts
        args: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = as_sequence(self.value(model, arg.value, frame))
                if spread is not None:
                    args.extend(spread.items)
                    continue
                args.append(UNKNOWN)
                complete = False
                break
            args.append(self.value(model, arg, frame))
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            if keyword.arg is not None:
                kwargs[keyword.arg] = self.value(model, keyword.value, frame)
                continue
            spread = self.value(model, keyword.value, frame)
            removed = _popped(model, keyword.value)
            if isinstance(spread, Mapping) and removed is not None:
                kwargs.update((k, v) for k, v in spread.items if isinstance(k, str) and k not in removed)
            else:
                complete = False
        return self.call(model, func, args, kwargs, node, frame, complete)

    def call(self, model: "ModuleModel", func: Value, args: list[Value], kwargs: dict[str, Value],
             node: ast.AST, frame: Frame | None, complete: bool = False) -> Value:
        """What calling `func` gives. `complete`: `args` and `kwargs` are all the call passes (a function's
        `*args` and `**kwargs` are then bound to the rest)."""
        depth = frame.depth if frame else 0
        if isinstance(func, Api):
            return self._api_call(model, func.name, args, kwargs, node)
        if isinstance(func, KeyedChoice):  # `BUILD[op]()`, `op` not known: not every builder's result
            return UNKNOWN
        if isinstance(func, OneOf):  # `STAGING[self.op](n)`: one of a registry's builders
            return _one_of(self.call(model, option, args, kwargs, node, frame, complete) for option in func.options)
        if isinstance(func, Partial):
            merged = dict(func.kwargs)
            merged.update(kwargs)
            made = self.call(model, func.func, [*func.args, *args], merged, node, frame, complete)
            return keywords_of_partial(made, func)  # `LAUNCHERS[k](body, ...)` of `partial(pl.kernel, mesh=...)`
        if isinstance(func, Func):
            if depth >= MAX_CALL_DEPTH:
                return UNKNOWN
            launcher = body_launcher(func.node) if isinstance(node, ast.Call) else None
            if launcher is not None:  # `self.pallas_call(body, out_shape=...)` of a launcher building the kernel
                kernel = kernel_around_body(self, model, func, launcher, args, kwargs, node, complete)
                if kernel is not None:
                    return kernel
            lifted = lifted_pallas_call(func.node) if isinstance(node, ast.Call) else None
            if lifted is not None:  # qwix's `qpl.pallas_call(body, out_shape=..., grid_spec=...)`
                kernel = lifted_kernel(self, model, func, lifted, args, kwargs, node)
                if kernel is not None:
                    return kernel
            if dispatches(func):  # `@functools.singledispatch`: the implementation for the argument's class
                return dispatched_call(self, func, args, lambda impl: self._return_value(
                    impl, args, kwargs, depth + 1, complete))
            return self._function_result(model, func, node, self._return_value(func, args, kwargs, depth + 1, complete))
        if isinstance(func, ClassValue):
            try:
                hash((tuple(args), tuple(kwargs.items())))
            except TypeError:
                return Instance(func)
            return Instance(func, tuple(args), tuple(sorted(kwargs.items())))
        if isinstance(func, KernelCall) and func.body is None and args and not kwargs:
            return KernelCall(func.api, func.model, func.node, args[0], func.kwargs)
        if isinstance(func, KernelCall) and func.api == "pl.pallas_call":
            return _pallas_call_results(func)
        return UNKNOWN

    def _function_result(self, model: "ModuleModel", func: Func, node: ast.AST, result: Value) -> Value:
        if isinstance(result, KernelCall) and result.body is not None and isinstance(node, ast.Call):
            forwarded = forwarded_call(func.node)  # a launch wrapper: the kernel is built at this call
            if forwarded is not None and result.node is forwarded:
                return rehome(result, model, node, forwarded)
        return result

    def within_budget(self) -> bool:
        """Whether the question in progress is within its steps (an answer past them is not kept)."""
        return self._steps <= STEP_BUDGET

    def bind_arguments(self, func: Func, args: list[Value], kwargs: dict[str, Value],
                       complete: bool = False) -> dict[str, Value]:
        """Parameter values for a call passing `args` and `kwargs`; with `complete` (nothing else is passed),
        `*args` and `**kwargs` parameters too."""
        node = func.node
        reads.note(("own", id(func.model.scope_of(node))))  # its signature
        spec = node.args
        positional = [*spec.posonlyargs, *spec.args]
        params: dict[str, Value] = {}
        if func.self_value is not None and positional:
            params[positional[0].arg] = func.self_value
            positional = positional[1:]
        for param, value in zip(positional, args):
            params[param.arg] = value
        names = {p.arg for p in [*positional, *spec.kwonlyargs]}
        for key, value in kwargs.items():
            if key in names:
                params[key] = value
        if complete and spec.vararg is not None:
            params[spec.vararg.arg] = Seq(tuple(args[len(positional):]))
        if complete and spec.kwarg is not None:
            params[spec.kwarg.arg] = Mapping(tuple((k, v) for k, v in kwargs.items() if k not in names))
        defaults = spec.defaults
        for param, default in zip(positional[len(positional) - len(defaults):], defaults):
            params.setdefault(param.arg, self.value(func.model, default))
        for param, default in zip(spec.kwonlyargs, spec.kw_defaults):
            if default is not None:
                params.setdefault(param.arg, self.value(func.model, default))
        return params

    def _return_value(self, func: Func, args: list[Value], kwargs: dict[str, Value], depth: int,
                      complete: bool = False) -> Value:
        try:
            key = ("return", id(func.node), func.self_value, tuple(args), tuple(sorted(kwargs.items())), complete)
            hash(key)
        except TypeError:
            key = None
        cache = func.model.eval_cache
        if key is not None and key in cache:
            return cache[key]
        result = self._evaluate_returns(func, args, kwargs, depth, complete)
        if key is not None and self._steps <= STEP_BUDGET:
            cache.keep(key, result)
        return result

    def _evaluate_returns(self, func: Func, args: list[Value], kwargs: dict[str, Value], depth: int,
                          complete: bool = False) -> Value:
        return self.returns_in_frame(func, self.bind_arguments(func, args, kwargs, complete), depth)

    def returns_in_frame(self, func: Func, params: dict, depth: int) -> Value:
        """What `func` returns with its parameters bound to `params` (values, or `Unforced` arguments)."""
        frame = Frame(func.node, params, depth)
        reads.note(("own", id(func.node)))  # its returns
        if isinstance(func.node, ast.Lambda):
            return self.value(func.model, func.node.body, frame)
        results: list[Value] = []
        for node in reachable_returns(self.value, func.model, func.node.body, frame)[0]:
            results.append(self.value(func.model, node.value, frame) if node.value is not None else Const(None))
        if not results:
            return Const(None)
        first = results[0]
        result = first if all(r == first for r in results) else function_choice(results)  # a factory's bodies
        if result is UNKNOWN and getattr(func.node, "returns", None) is not None:  # `-> Tuning`: what it declares
            return declared_of(self, func.model, func.node.returns)
        return result

    def _api_call(self, model: "ModuleModel", name: str, args: list[Value], kwargs: dict[str, Value],
                  node: ast.AST) -> Value:
        if name == "functools.partial":
            if not args:
                return UNKNOWN
            return Partial(args[0], tuple(args[1:]), tuple(kwargs.items()), node)
        if name in FROM_DATA:
            return array_from_data(args, kwargs, _source(model, node, name))
        if name in INTEGER_HELPERS:
            return INTEGER_HELPERS[name](args) if not kwargs else UNKNOWN
        if name in KERNEL_FACTORIES:
            body_kw = _BODY_ARG[name]
            if body_kw is None:  # pl.core_map(mesh) only ever returns a decorator
                body = None
            else:
                body = args[0] if args else kwargs.get(body_kw)
            nodes = {k.arg: k.value for k in getattr(node, "keywords", []) if k.arg}
            kw = tuple((k, v, nodes.get(k)) for k, v in kwargs.items())
            return KernelCall(name, model, node, body, kw)
        if name in _SEMAPHORES:
            space, dtype = _SEMAPHORES[name]
            shape = shape_of(args[0] if args else kwargs.get("shape", Seq(())))
            return MemType(space, shape, dtype, _source(model, node, name), name)
        if name in _SHAPED_TYPES:
            shape = shape_of(args[0] if args else kwargs.get("shape", UNKNOWN))
            dtype = dtype_name(args[1] if len(args) > 1 else kwargs.get("dtype", UNKNOWN))
            return MemType(_SHAPED_TYPES[name], shape, dtype, _source(model, node, name), name,
                           _details(kwargs, ("shape", "dtype")) if name == "plgpu.TMEM" else (),
                           (model, node) if isinstance(node, ast.Call) else None)
        if name in _BARRIERS:
            count = kwargs.get("num_barriers", Const(1))
            if isinstance(count, Const) and type(count.value) is int:
                shape = () if count.value == 1 else (count.value,)
            else:
                shape = shape_of(count) if isinstance(count, Seq) else None  # `num_barriers=(2, 3)`
            known = not args  # keyword-only in JAX: a positional argument is an error, not a barrier
            return MemType("smem", shape if known else None, _BARRIERS[name], _source(model, node, name), name,
                           _details(kwargs, ("num_barriers",)))
        if name == "plgpu.RefUnion":
            return MemType("smem", None, "int8", _source(model, node, name), name)
        if name == "jax.eval_shape":  # one array's struct, where the function returns one array
            return evaluated_shape(args, _source(model, node, name))
        if name == "jax.ShapeDtypeStruct":
            shape = shape_of(args[0] if args else kwargs.get("shape", UNKNOWN))
            dtype = dtype_name(args[1] if len(args) > 1 else kwargs.get("dtype", UNKNOWN))
            return ShapeDtype(shape, dtype, _source(model, node, name))
        if name in _INTERPRET_PARAMS:
            return InterpretParams(name)
        if name == "plgpu.alloc_semaphore":
            return SemaphoreRef(shape_of(args[0] if args else kwargs.get("shape", Seq(()))), _source(model, node, name))
        if name == "jax.freeze" and args and isinstance(args[0], SemaphoreRef):
            return SemaphoreArray(args[0], _source(model, node, name))
        if name in ARRAYS:
            return array_value(name, args, kwargs, _source(model, node, name))
        if name in TRANSFORMS:
            return transformed(name, args, kwargs, _source(model, node, name))
        if name in LIKE_ARRAYS and args and isinstance(args[0], (Array, ShapeDtype)):
            dtype = dtype_name(kwargs["dtype"]) if "dtype" in kwargs else args[0].dtype
            return Array(args[0].shape, dtype, _source(model, node, name))
        if name == "jnp.arange" and args and not kwargs.keys() - {"dtype"} and len(args) == 1:
            if isinstance(args[0], Const) and type(args[0].value) is int:
                dtype = dtype_name(kwargs["dtype"]) if "dtype" in kwargs else "int32"
                return Array((max(args[0].value, 0),), dtype, _source(model, node, name))
            return UNKNOWN
        if name in TRANSPARENT_WRAPPERS and args:
            return args[0]  # `jax.jit(f)` calls f: what f returns is what the jitted call returns
        if name in _SPECS:
            params = _SPECS[name]
            fields = list(zip(params, args))
            fields += [(k, v) for k, v in kwargs.items() if k in params and k not in params[:len(args)]]
            return Spec(name, tuple(fields))
        if name in ("jnp.dtype", "np.dtype") and args:
            dtype = dtype_name(args[0])
            return Api(f"jnp.{dtype}") if dtype else UNKNOWN
        if name in _REPLACES and len(args) == 1:
            return replaced(args[0], kwargs)
        return UNKNOWN

    # ---- parameters seen from their call sites --------------------------------------------------

    def param_from_call_sites(self, model: "ModuleModel", func_node: ast.AST, param: str) -> Value:
        """What the call sites of `func_node` (direct calls and `functools.partial`) pass for `param`."""
        key = ("param", id(func_node), param)
        cache = model.eval_cache
        if key in cache:
            return cache[key]
        if key in self._active:
            return UNKNOWN
        self._active.add(key)
        reads.begin(("own", id(model.scope_of(func_node))))  # kept below: what it reads is collected apart
        try:
            try:
                options: list[Value] = []
                for _, _, func, arguments in self._argument_sites(model, func_node):
                    value = arguments.bound(func, param)
                    if value is not UNKNOWN and value not in options:
                        options.append(value)
            finally:
                self._active.discard(key)
            if not options:
                # Never called here by name (a kernel body, a branch or loop body JAX calls, a lambda): JAX passes
                # the refs or operands positionally, and a parameter after them keeps its default.
                default = _default_of(func_node, param)
                if default is not None:
                    options.append(self.value(model, default))
            result = _one_of(options)  # unknown where none is known (an OneOf passed on is spread out)
            if isinstance(result, OneOf) and len(result.options) > MAX_CALL_SITE_OPTIONS:
                result = UNKNOWN  # a recursion's `n - 1`: one value more each time its call sites are found again
        finally:
            read = reads.end()
        cache.keep(key, result, read)  # an edit of one call site finds it again first (`reads.settled`)
        again = (_found_again, self, self.in_own_module_only, Evaluator.param_from_call_sites, model, func_node, param)
        reads.found_again_by(read, again)
        return result

    def call_sites_with_nodes(self, model: "ModuleModel", func_node: ast.AST):
        """(model, call, Func, args, kwargs) for each place that calls or partially applies it: in its
        module and in the workspace modules importing it; directly, through `jax.jit(f)(...)`,
        `jax.jit(f).trace(...)`, `jax.eval_shape(f, ...)`, and (`__call__`) through an instance."""
        for where, call, func, arguments in self._argument_sites(model, func_node):
            yield (where, call, func, *arguments.values())

    def _argument_sites(self, model: "ModuleModel", func_node: ast.AST):
        """`call_sites_with_nodes` with each call's arguments left to evaluate (`CallArguments`)."""
        return argument_sites(self, model, func_node)


def _found_again(evaluator: Evaluator, own_module_only: bool, find, *question) -> None:
    """An answer found again into its memo (`reads.settled`): plain functions, no bound method kept per answer."""
    if evaluator.project.holds(question[0]):  # not for a model dropped since
        with evaluator.own_module_call_sites() if own_module_only else contextlib.nullcontext():
            find(evaluator, *question)


def _popped(model: "ModuleModel", spread: ast.expr) -> frozenset[str] | None:
    """Keys a `**name` spread no longer holds: those its function pops out of `name` first (None: `name` is
    changed otherwise too, and what it holds is not known)."""
    if not isinstance(spread, ast.Name):
        return frozenset()
    return popped_keys(model, model.enclosing_function(spread) or model.tree, spread.id)


def _bound_names(statement: ast.AST) -> set[str]:
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    return {t.id for t in targets if isinstance(t, ast.Name)}


_REPLACES = ("dataclasses.replace", "copy.replace")  # a dataclass instance with some fields given anew


# The APIs `Evaluator._api_call` makes something of (every other call of an API is unknown).
_CALLS_READ = frozenset({"functools.partial", "jax.eval_shape", "plgpu.RefUnion", "jax.ShapeDtypeStruct", "plgpu.alloc_semaphore",
                         "jax.freeze", "jnp.arange", "jnp.dtype", "np.dtype", *KERNEL_FACTORIES, *_SEMAPHORES,
                         *_SHAPED_TYPES, *_BARRIERS, *_INTERPRET_PARAMS, *ARRAYS, *LIKE_ARRAYS, *TRANSFORMS,
                         *TRANSPARENT_WRAPPERS, *_SPECS, *INTEGER_HELPERS, *FROM_DATA, *_REPLACES})


def _source(model: "ModuleModel", node: ast.AST, name: str) -> str:
    """How an API call was written, for the values that keep it (asked only by those: most calls evaluated,
    `jnp.maximum(...)`, make none, and cutting the text out costs more than the rest of their evaluation)."""
    return model.segment(node) if isinstance(node, ast.expr) else name


@functools.lru_cache(maxsize=8192)
def _api_attribute(name: str, attr: str) -> Api:
    """`jnp.maximum` of `jnp`: one value per spelling, shared (values are immutable), since every kernel's
    `jnp.` / `pl.` attribute asks the same prefix walk of `canonical` again."""
    return Api(canonical(f"{name}.{attr}"))


def _first(found: Value | None, otherwise, *args) -> Value:
    return found if found is not None else otherwise(*args)


def _key_of(value: Value):
    """A folded value as a dict key: a constant's value, an `enum.Enum` member itself, a tuple of such (a tuning
    table keyed by shape, `SPECS[x.shape]`); None where not known."""
    if isinstance(value, Const):
        return value.value
    if isinstance(value, Seq) and len(value.items) <= 8:
        items = tuple(_key_of(item) for item in value.items)
        return None if any(item is None for item in items) else items
    return value if isinstance(value, Instance) and value.member is not None else None


def _item(value: Value, index) -> Value:
    if isinstance(value, Seq) and type(index) is int and -len(value.items) <= index < len(value.items):
        return value.items[index]
    return UNKNOWN


def _default_of(func_node: ast.AST, param: str) -> ast.expr | None:
    """The default expression of `func_node`'s parameter `param`, or None."""
    spec = getattr(func_node, "args", None)
    if not isinstance(spec, ast.arguments):
        return None
    positional = [*spec.posonlyargs, *spec.args]
    pairs = [*zip(positional[len(positional) - len(spec.defaults):], spec.defaults),
             *zip(spec.kwonlyargs, spec.kw_defaults)]
    return next((default for arg, default in pairs if arg.arg == param and default is not None), None)


def _pallas_call_results(kernel: KernelCall) -> Value:
    """What launching a TPU `pallas_call` returns, where its out_shape holds a semaphore: the split async copy
    passes a DMA semaphore one kernel returns (`out_shape=(x, pltpu.SemaphoreType.DMA)`) to the next one as an
    operand, which needs its type. Other results stay unknown (arrays are values, not described here)."""
    found = kernel.kwarg("out_shape")
    out = found[0] if found else None
    items = tuple(as_memtype(item) for item in (out.items if isinstance(out, Seq) else (out,)))
    if not any(isinstance(item, MemType) and item.space == "semaphore_mem" for item in items):
        return UNKNOWN
    return Seq(items) if isinstance(out, Seq) else items[0]
