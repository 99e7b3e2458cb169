"""Attributes of user classes and their instances as the evaluator reads them: class bodies and their bases
(JAX's Pallas classes read from its source), properties, Enum members, dataclass fields and what
`__init__` assigned to `self`. A part of `Evaluator` (its base), kept apart for size."""

from __future__ import annotations

import ast

from . import reads
from .call_sites import constructed_field
from .classes import (class_members, constructor_parameters, dataclass_fields, enum_member, field_default, is_enum,
                      self_assignments, set_after_init)
from .frames import Frame, one_of, terminal_name
from .library_classes import pallas_class
from .values import UNKNOWN, Api, ClassValue, Const, Func, Instance, Value

_PROPERTIES = ("property", "cached_property")


# `self` of a method is what the class's constructions made: those of the class's own module are followed
# (a config built in its `__main__`, a kernel class made by its factory). Following every module that
# constructs the class modelled most of maxtext for `AttentionOp` (5 -> 102 modules, 0.3 -> 4 s CPU for
# one file's first analysis), for arguments that are seldom static there.


def replaced(instance: Value, changes: dict[str, Value]) -> Value:
    """`dataclasses.replace(desc, cols=256)`: the same dataclass construction with the fields `changes` names
    given anew (a field given positionally is read from the keywords first, see `_dataclass_field`)."""
    if not isinstance(instance, Instance) or instance.member is not None or dataclass_fields(instance.cls.node) is None:
        return UNKNOWN
    merged = dict(instance.kwargs)
    merged.update(changes)
    kwargs = tuple(sorted(merged.items()))
    try:
        hash(kwargs)
    except TypeError:  # an unhashable value, as a construction with one is kept (`Evaluator.call`)
        return Instance(instance.cls)
    return Instance(instance.cls, instance.args, kwargs)


class ClassAttributes:
    def _class_attribute(self, cls: ClassValue, attr: str, instance: Instance | None, seen: int = 0) -> Value:
        if not self._defines(cls, attr, seen):
            return UNKNOWN
        reads.note(("own", id(cls.node)))  # its body's statements
        stmt = class_members(cls.node).get(attr)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            classmethod_ = any(terminal_name(d) == "classmethod" for d in stmt.decorator_list)
            func = Func(cls.model, stmt, cls if classmethod_ else instance)  # `cls` of a classmethod: the class
            if instance is not None and any(terminal_name(d) in _PROPERTIES for d in stmt.decorator_list):
                return self.call(cls.model, func, [], {}, stmt, None)
            return func
        if stmt is not None and instance is None and enum_member(attr, stmt) and is_enum(self, cls):
            return Instance(cls, member=attr)  # `Buffers.RESIDUAL`: its `.value` is what the class body wrote
        if stmt is not None:  # `x = value`, `INTERPRET: bool = False`
            return self.value(cls.model, stmt.value)
        return self._bases_attribute(cls, attr, instance, seen) if seen < 8 else UNKNOWN

    def _bases_attribute(self, cls: ClassValue, attr: str, instance: Instance | None, seen: int = 0) -> Value:
        """`attr` as the bases of `cls` define it, in order (a base of JAX's Pallas read from its source)."""
        for base_value in self._bases(cls):
            found = self._class_attribute(base_value, attr, instance, seen + 1)
            if found is not UNKNOWN:
                return found
        return UNKNOWN

    def _bases(self, cls: ClassValue) -> list[ClassValue]:
        bases = []
        for base in cls.node.bases:
            base_value = self.value(cls.model, base)
            if isinstance(base_value, Api):
                base_value = pallas_class(self.project, cls.model, base_value.name)
            if isinstance(base_value, ClassValue):
                bases.append(base_value)
        return bases

    def _defines(self, cls: ClassValue, attr: str, seen: int) -> bool:
        """Does the class or a base (within 8 levels of `seen`) write `attr`? Kept with the class's module text:
        most attributes asked of an instance are none of its class's, and a deep hierarchy was walked each time."""
        key = ("defines", id(cls.node), attr, seen)
        cache = cls.model.eval_cache
        found = cache.get(key)
        if found is None:
            reads.begin(cls.model.read_key, ("own", id(cls.node)))  # its body's statements, and its bases'
            try:
                found = attr in class_members(cls.node) or seen < 8 and any(
                    self._defines(base, attr, seen + 1) for base in self._bases(cls))
            finally:
                read = reads.end()
            cache.keep(key, found, read)
        return found

    def _instance_attribute(self, instance: Instance, attr: str) -> Value:
        if instance.member is not None and attr in ("value", "_value_", "name", "_name_"):
            if attr in ("name", "_name_"):
                return Const(instance.member)
            return self.value(instance.cls.model, class_members(instance.cls.node)[instance.member].value)
        field = self._dataclass_field(instance, attr)
        if field is not None:
            return UNKNOWN if instance.declared else field
        if instance.declared and any(isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                                     and s.target.id == attr for s in instance.cls.node.body):
            return UNKNOWN  # a field of a NamedTuple, flax struct or the like: each instance has its own
        found = self._class_attribute(instance.cls, attr, instance)
        if found is not UNKNOWN:
            return found
        assigned = self_assignments(instance.cls).get(attr)
        if assigned is None or instance.declared:
            return UNKNOWN
        method, self_name, value = assigned
        params = {self_name: instance}
        if getattr(method, "name", None) == "__init__":  # `self.block = block`: what the constructor was given
            params = self.bind_arguments(Func(instance.cls.model, method, instance), list(instance.args),
                                         dict(instance.kwargs))
            if not instance.args and not instance.kwargs:  # `self` of a method: made by the class's constructions
                with self.own_module_call_sites():  # the class's own constructions (above)
                    for param in constructor_parameters(method, params):
                        params[param] = self.param_from_call_sites(instance.cls.model, method, param)
        return self.value(instance.cls.model, value, Frame(method, params, 0))

    def _dataclass_field(self, instance: Instance, attr: str) -> Value | None:
        """A `@dataclass` field: what the constructor was given for it (by keyword, or by position in the
        order the fields are written), else its default (`= value`, `field(default=value)`); as a class
        with `self.x = x` in `__init__` is read. None: no field of that name (or no dataclass)."""
        reads.note(("own", id(instance.cls.node)))
        reads.note(("own", id(instance.cls.model.scope_of(instance.cls.node))))  # its decorators
        fields = dataclass_fields(instance.cls.node)
        names = [f.target.id for f in fields or ()]
        if attr not in names:
            return None
        kwargs = dict(instance.kwargs)
        if attr in kwargs:
            return kwargs[attr]
        index = names.index(attr)
        if set_after_init(fields[index]) and attr in self_assignments(instance.cls):
            return None  # set in `__post_init__`: read as a `self.x = ...` of a method
        if index < len(instance.args):
            return instance.args[index]
        default = field_default(fields[index])
        if default is None and not instance.args and not instance.kwargs:  # `self` of a method: its constructions
            with self.own_module_call_sites():  # the class's own constructions (above)
                return one_of(constructed_field(self, instance.cls, index, attr))
        return UNKNOWN if default is None else self.value(instance.cls.model, default)


def declared_instance(evaluator, model, arg: ast.arg) -> Value:
    """`cfg: Config` of a parameter no call here passes: an instance of that workspace class, only declared (see
    `Instance.declared`); UNKNOWN for another annotation, or a class this module subclasses (a subclass may say
    otherwise)."""
    return declared_of(evaluator, model, arg.annotation)


def declared_of(evaluator, model, annotation: ast.expr | None) -> Value:
    """An annotation's declared instance (`-> Config` of a function whose return is not known here too)."""
    if not isinstance(annotation, (ast.Name, ast.Attribute)):
        return UNKNOWN
    cls = evaluator.value(model, annotation)
    if not isinstance(cls, ClassValue):
        return UNKNOWN
    if cls.node.name in _subclassed_names(cls.model):
        return UNKNOWN
    return Instance(cls, declared=True)


def _subclassed_names(model) -> frozenset[str]:
    """The names a class of `model` derives from (`class Fast(Config)`: Config)."""
    found = getattr(model, "_subclassed_names", None)  # of the tree alone: kept with the model, not its memos,
    if found is None:                                   # which edits of other modules empty (a walk a keystroke)
        found = frozenset(terminal_name(base) for node in model.scopes if node.__class__ is ast.ClassDef
                          for base in node.bases)  # every class is a scope: no walk of the whole tree
        model._subclassed_names = found
    return found
