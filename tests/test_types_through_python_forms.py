"""PAL001 follows a get_global's type through the Python forms kernels are written in (issue #40): a loop or
comprehension variable over a dict or list of types, an `__init__` parameter seen from the class's
constructions, a `functools.cached_property`, an `enum.Enum` member, a registry of type builders picked by
one of several keys. What JAX says on each form is checked by tests/fixtures/agreement (bad_*_of_types.py,
bad_config_method_type_partial_body.py, bad_cached_property_gmem.py, bad_enum_member_type.py,
bad_registry_of_type_builders.py)."""

import pytest

from conftest import at

HEADER = """\
import enum
import functools
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

SMEM = plgpu.SMEM((128,), jnp.float32)
"""
GOT = 'JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"; allocate it as scratch.'


def first_sentence(findings):
    return [(code, span, message.split(" Use ")[0]) for code, span, message in findings]


FORMS = {
    "for loop over a dict's items": ("TYPES = {'a': SMEM, 'b': plgpu.SemaphoreType.REGULAR}\n\n"
                                     "def body(o_ref):\n    bufs = {}\n    for name, kind in TYPES.items():\n"
                                     "        bufs[name] = pl.get_global(kind)\n", "pl.get_global(kind)"),
    "list comprehension over a list": ("TYPES = [SMEM]\n\ndef body(o_ref):\n"
                                       "    bufs = [pl.get_global(t) for t in TYPES]\n", "pl.get_global(t)"),
    "comprehension over a dict's values()": ("TYPES = {'a': SMEM}\n\ndef body(o_ref):\n"
                                         "    bufs = [pl.get_global(t) for t in TYPES.values()]\n", "pl.get_global(t)"),
    "__init__ parameter, two constructions": (
        "class K:\n    def __init__(self, kind):\n        self.kind = kind\n\n"
        "    def body(self, o_ref):\n        x = pl.get_global(self.kind)\n\n"
        "A = K(SMEM)\nB = K(SMEM)\n", "pl.get_global(self.kind)"),
    "dataclass field without a default, from the constructions": (
        "import dataclasses\n\n@dataclasses.dataclass\nclass K:\n    kind: object\n\n"
        "    def body(self, o_ref):\n        x = pl.get_global(self.kind)\n\nA = K(SMEM)\nB = K(kind=SMEM)\n",
        "pl.get_global(self.kind)"),
    "cached_property": ("class P:\n    @functools.cached_property\n    def smem(self):\n        return SMEM\n\n"
                        "def body(o_ref):\n    x = pl.get_global(P().smem)\n", "pl.get_global(P().smem)"),
    "Enum member's value": ("class B(enum.Enum):\n    STAGE = SMEM\n\n"
                            "def body(o_ref):\n    x = pl.get_global(B.STAGE.value)\n", "pl.get_global(B.STAGE.value)"),
    "generator over a property of a parameter annotated with the config class": (
        "class Cfg:\n    @property\n    def kinds(self):\n        return SMEM, SMEM\n\n"
        "def body(o_ref, *, cfg: Cfg):\n    a, b = (pl.get_global(t) for t in cfg.kinds)\n", "pl.get_global(t)"),
    "registry picked by one of several keys": (
        "BUILD = {'a': lambda: SMEM, 'b': lambda: SMEM}\n\nclass K:\n    def __init__(self, op):\n"
        "        self.op = op\n\n    def body(self, o_ref):\n        x = pl.get_global(BUILD[self.op]())\n\n"
        "for op in BUILD:\n    K(op)\n", "pl.get_global(BUILD[self.op]())"),
}


@pytest.mark.parametrize("form", FORMS)
def test_the_type_is_followed(ws, form):
    code, call = FORMS[form]
    source = HEADER + "\n" + code
    assert first_sentence(ws.check(source=source)) == [("PAL001", at(source, call), GOT)]


@pytest.mark.parametrize("code", [
    # every item a global semaphore: nothing to report
    "TYPES = {'a': plgpu.SemaphoreType.REGULAR}\n\ndef body(o_ref):\n"
    "    bufs = {n: pl.get_global(t) for n, t in TYPES.items()}\n",
    # the iterated value is not known: nothing is guessed
    "def body(o_ref, types):\n    bufs = [pl.get_global(t) for t in types]\n",
    # an Enum member's name is a string, and an auto() value is not known
    "class B(enum.Enum):\n    STAGE = enum.auto()\n\ndef body(o_ref):\n    x = pl.get_global(B.STAGE.value)\n",
    # a key not in the registry: unknown, not every builder
    "BUILD = {'a': lambda: SMEM}\n\ndef body(o_ref, op):\n    x = pl.get_global(BUILD[op]())\n",
    # an annotated config's fields are each instance's own: its default is not taken for them
    "import dataclasses\n\n@dataclasses.dataclass\nclass Cfg:\n    kind: object = SMEM\n\n"
    "def body(o_ref, *, cfg: Cfg):\n    x = pl.get_global(cfg.kind)\n",
    # a class this module subclasses: a subclass may say otherwise
    "class Cfg:\n    @property\n    def kind(self):\n        return SMEM\n\nclass Other(Cfg):\n    pass\n\n"
    "def body(o_ref, *, cfg: Cfg):\n    x = pl.get_global(cfg.kind)\n",
], ids=["regular semaphores", "unknown iterable", "auto", "unknown key", "annotated config field",
        "annotated config subclassed"])
def test_nothing_is_reported_where_the_type_is_fine_or_unknown(ws, code):
    assert ws.check(source=HEADER + "\n" + code) == []
