"""Which calls are JAX's `get_global`: jedi against the analysed environment, else the file's imports."""

import pytest

from conftest import at

BAD = "plgpu.SemaphoreType.BARRIER"
MESSAGE = ('JAX: "get_global only supports semaphores, got Ref<gmem>{barrier_semaphore[]}"; '
           "use plgpu.SemaphoreType.REGULAR. That is the one type get_global allocates: a global semaphore")

SPELLINGS = {
    "pl alias": ("from jax.experimental import pallas as pl\n", "pl.get_global"),
    "P alias of the module": ("import jax.experimental.pallas as P\n", "P.get_global"),
    "from-import": ("from jax.experimental.pallas import get_global\n", "get_global"),
    "from-import renamed": ("from jax.experimental.pallas import get_global as gg\n", "gg"),
    "full dotted path": ("import jax.experimental.pallas\n", "jax.experimental.pallas.get_global"),
    "mgpu alias of the Pallas mosaic_gpu module": ("from jax.experimental import pallas as mgpu_pl\n", "mgpu_pl.get_global"),
}


@pytest.mark.parametrize("env", ["ws", "ws_fallback"])
@pytest.mark.parametrize("name", list(SPELLINGS))
def test_jax_get_global_is_found_however_imported(request, env, name):
    workspace = request.getfixturevalue(env)
    imports, callee = SPELLINGS[name]
    source = (imports + "from jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
              f"def body():\n    s = {callee}({BAD})\n")
    assert workspace.check(source=source) == [("PAL001", at(source, f"{callee}({BAD})"), MESSAGE)]


NOT_JAX = {
    "a user function named get_global": "def get_global(x):\n    return x\n\ndef body():\n    get_global({bad})\n",
    "config.get_global()": "class Config:\n    def get_global(self, x):\n        return x\n\nconfig = Config()\n\n"
                           "def body():\n    config.get_global({bad})\n",
    "a method named get_global": "class K:\n    def get_global(self, x):\n        return x\n\n"
                                 "    def body(self):\n        self.get_global({bad})\n",
    "pl bound to something else": "import json as pl\n\ndef body():\n    pl.get_global({bad})\n",
    "pl shadowed by a parameter": "def body(pl):\n    pl.get_global({bad})\n",
    "a user module named like pallas": "from mypkg import get_global\n\ndef body():\n    get_global({bad})\n",
    "an unknown object": "def body(obj):\n    obj.get_global({bad})\n",
}


@pytest.mark.parametrize("env", ["ws", "ws_fallback"])
@pytest.mark.parametrize("name", list(NOT_JAX))
def test_other_get_globals_never_match(request, env, name):
    workspace = request.getfixturevalue(env)
    workspace.write("mypkg/__init__.py", "def get_global(x):\n    return x\n")
    source = ("from jax.experimental import pallas as pl_real\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
              + NOT_JAX[name].format(bad=BAD))
    assert workspace.check(source=source) == []


def test_star_import_is_resolved_by_jedi_only(ws, ws_fallback):
    """Only the analysed environment knows what `from ... import *` brings in: never guessed."""
    source = ("from jax.experimental.pallas import *\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
              f"def body():\n    get_global({BAD})\n")
    assert ws.check(source=source) == [("PAL001", at(source, f"get_global({BAD})"), MESSAGE)]
    assert ws_fallback.check(source=source) == []


def test_reexport_from_a_workspace_module(ws, ws_fallback):
    for workspace in (ws, ws_fallback):
        workspace.write("common.py", "from jax.experimental import pallas as pl\n"
                                     "from jax.experimental.pallas import mosaic_gpu as plgpu\n")
        source = f"from common import pl, plgpu\n\ndef body():\n    pl.get_global({BAD})\n"
        assert workspace.check(source=source) == [("PAL001", at(source, f"pl.get_global({BAD})"), MESSAGE)]


def test_half_typed_code_still_resolves(ws):
    source = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
              f"def body():\n    s = pl.get_global({BAD})\n    pl.semaphore_signal(s, \n\ndef other(:\n")
    # Python itself blames `def other(:` (the open parenthesis above swallows the lines between).
    assert ws.check(source=source) == [
        ("PAL001", at(source, f"pl.get_global({BAD})"), MESSAGE),
        ("PAL000", at(source, "def other(:"), "SyntaxError: invalid syntax"),
    ]


def test_three_quotes_left_open_above_docstrings_lose_only_their_line(ws):
    """Quotes opened in a body pair every later docstring's quotes the other way round, and
    Python blames the last one; the line that opened them is the one dropped, so what is below
    is still analysed (before, each blamed line was replaced in turn: with 300 docstrings below,
    the recovery gave up and nothing but PAL000 was reported)."""
    unit = "def body_{i}():\n    \"\"\"Kernel {i}.\"\"\"\n    s = {call}\n\n\n"
    source = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n\n"
              "def typing():\n    x = 1\n    \"\"\"\n    y = 2\n\n\n"
              + "".join(unit.format(i=i, call=f"pl.get_global({BAD})" if i % 100 == 0 else "i") for i in range(300)))
    assert ws.check(source=source) == [
        *[("PAL001", at(source, f"pl.get_global({BAD})", n), MESSAGE) for n in (1, 2, 3)],
        ("PAL000", at(source, '"""', 601), "SyntaxError: unterminated triple-quoted string literal "
                                           f"(detected at line {source.count(chr(10))})"),
    ]
