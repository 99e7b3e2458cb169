"""Big data literals are elided before parsing (analysis/big_literals.py), and nothing else changes.

A line of 333,000 numbers (`DATA = [1, 1, ...]`) was a syntax tree of 333,000 nodes: 360 MiB for the
analysis, 673 MiB for `check --diff`, for values no rule reads (a value of more than 4,096 values is
unknown). Its inside is now replaced by `*...` and spaces before `ast.parse`. These tests hold what makes
that safe: the tree is Python's own tree of the file but for the elided displays (every other node, with
its position); what Python reads a display's items one by one in (a loop, an unpacking, a pattern, a
subscript), or a display that is no code (in a string or a comment), is left alone; a text that does not
parse raises Python's own error; what the evaluator makes of each elided display is unknown; and the
real `check` reports the same findings for a file with such lines as for the same file with each literal
over many short lines, which is never elided.
"""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys

import pytest

from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.analysis import arithmetic, big_literals
from pallas_lsp.analysis.big_literals import parse_elided
from pallas_lsp.analysis.model import ModuleModel
from pallas_lsp.analysis.source import ParsedSource
from pallas_lsp.analysis.values import UNKNOWN
from pallas_lsp.source_text import split_lines

N = 5_000  # values: over 4,096, on a line of over 8,192 characters


def numbers(count: int = N, each: str = "1") -> str:
    return ", ".join([each] * count)


ELIDED = {  # text -> how many displays are elided
    "list": (f"x = 1\nDATA = [{numbers()}]\ny = 2\n", 1),
    "tuple": (f"DATA = ({numbers(each='-1.5e3')})\n", 1),
    "set": (f"DATA = {{{numbers(each='0x1F')}}}\n", 1),
    "dict": ("DATA = {" + ", ".join(f"{i}: 'v{i}'" for i in range(N)) + "}\n", 1),
    "nested": ("DATA = [" + ", ".join(["[1, -2.5, 3j]"] * 2_000) + "]\n", 1),
    "rows": ("DATA = (" + ", ".join(["(1, 2)", "[]", "(3)", "()", "[- 4,]"] * 1_000) + ")\n", 1),
    "one big row": (f"DATA = [[{numbers()}], [1, 2]]\n", 1),
    "strings": ("WORDS = [" + ", ".join(['"héllo wörld"', "b'\\x00ab'", "r'\\d'", "'a' 'b'"] * 1_300) + "]\n", 1),
    "constants": (f"FLAGS = [{numbers(each='None, True, False')}]\n", 1),
    "argument": (f"import numpy as np\nDATA = np.asarray([{numbers()}], dtype=np.int32)\n", 1),
    "keyword": (f"f(table=[{numbers()}])\n", 1),
    "returned": (f"def table():\n    return [{numbers()}]\n", 1),
    "item of code": (f"PAIR = (name, [{numbers()}])\n", 1),
    "sum": (f"DATA = [{numbers()}] + [{numbers()}]\n", 2),
    "two on a line": (f"A = [{numbers()}]; B = ({numbers()})\n", 2),
    "opened above": (f"DATA = [\n    # generated\n    {numbers()},\n    7,\n]\nafter = DATA\n", 1),
    "comments inside": (f"DATA = [  # first\n{numbers()},  # a, b\n{numbers()}\n]\n", 1),
    "crlf": (f"x = 1\r\nDATA = [\r\n{numbers()}\r\n]\r\ny = 'é'\r\n", 1),
    "after unicode": (f"s = 'ünïcode'; DATA = [{numbers()}]; t = 'ü'\n", 1),
    "deep in code": (f"class A:\n    def f(self):\n        if x:\n            return g(1, [{numbers()}])\n", 1),
    "annotated": (f"DATA: list[int] = [{numbers()}]\n", 1),
}

NOT_ELIDED = {
    "small": "DATA = [" + numbers(4_000) + "]\n",  # its value is known: 4,001 values
    "in a string": f"S = '[{numbers()}]'\n",
    "in a docstring": f'"""\n[{numbers()}]\n"""\n',
    "in a comment": f"x = 1  # [{numbers()}]\n",
    "loop": f"for v in [{numbers()}]:\n    pass\n",
    "comprehension": f"y = [v for v in ({numbers()})]\n",
    "unpacking": f"a, *b = [{numbers()}]\n",
    "index": f"y = x[({numbers()})]\n",
    "starred": f"f(*[{numbers()}])\n",
    "negated": f"y = -[{numbers()}]\n",
    "negated row": f"y = [-[{numbers()}]]\n",
    "subscripted": f"y = [{numbers()}][0]\n",
    "pattern": f"match x:\n    case [{numbers()}]:\n        pass\n",
    "f-string": f"s = f'{{[{numbers()}]}}'\n",
    "name inside": f"DATA = [{numbers()}, x]\n",
    "walrus": f"DATA = [{numbers()}, y := 2]\n",
    "call": f"DATA = f({numbers()})\n",
    "grouping": f"DATA = ({numbers()}) if x else 0\n",
    "triple-quoted item": f'DATA = [{numbers()}, """a"""]\n',
    "escape": f"DATA = [{numbers()}, '\\N{{BULLET}}']\n",
    "continued": f"DATA = [{numbers()}, \\\n 1]\n",
}

BROKEN = {
    "inside": f"DATA = [{numbers()} 1]\n",
    "after": f"DATA = [{numbers()}]\ndef f(:\n",
    "before": f"def f(:\nDATA = [{numbers()}]\n",
    "unclosed": f"DATA = [{numbers()}\nx = 1\n",
    "target": f"[{numbers()}] = x\n",
    "deleted": f"del [{numbers()}]\n",
    "bad escape": f"DATA = [{numbers()}, '\\x4']\n",
    "bytes and text": f"DATA = [{numbers()}, b'a' 'b']\n",
    "non-ASCII bytes": f"DATA = [{numbers()}, b'é']\n",
    "leading zero": f"DATA = [{numbers()}, 0777]\n",
    "too deep": "DATA = " + "[" * 170 + f"[{numbers()}, " + "[" * 40 + "1" + "]" * 211 + "\n",
    "assignment": f"DATA = [{numbers()}, y = 2]\n",
}


class _Placeholder(ast.NodeTransformer):
    """Each display starting at one of `starts` made a placeholder (its position kept)."""

    def __init__(self, starts: set):
        self.starts = starts

    def visit(self, node):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and (node.lineno, node.col_offset) in self.starts:
            return ast.copy_location(ast.Constant("elided"), node)
        return super().visit(node)


def _without_elided(tree: ast.Module, starts: set) -> str:
    return ast.dump(_Placeholder(starts).visit(tree), include_attributes=True)


def _same_but_elided(text: str) -> list:
    """The regions elided in `text`, having checked the tree against Python's own."""
    tree, regions = parse_elided(text)
    elided = {(node.lineno, node.col_offset) for node in ast.walk(tree) if _is_elided(node)}
    assert len(elided) == len(regions)
    assert elided == {_starts_at(text, region.start) for region in regions}
    assert _without_elided(tree, elided) == _without_elided(ast.parse(text), elided)
    return regions


def _is_elided(node: ast.AST) -> bool:
    """`[*...]`, `(*...,)`, `{*...}` or `{**...}`."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return False
    inner = node.values if isinstance(node, ast.Dict) else node.elts
    if len(inner) != 1 or isinstance(node, ast.Dict) and node.keys != [None]:
        return False
    value = inner[0].value if isinstance(inner[0], ast.Starred) else inner[0]
    return isinstance(value, ast.Constant) and value.value is Ellipsis


def test_the_bound_is_the_evaluator_s():
    """Only a display whose value the evaluator does not keep anyway is elided."""
    assert big_literals.MAX_ITEMS == arithmetic.MAX_ITEMS


@pytest.mark.parametrize("text,count", ELIDED.values(), ids=ELIDED.keys())
def test_the_tree_is_python_s_own_but_for_the_elided_literals(text, count):
    assert len(_same_but_elided(text)) == count


@pytest.mark.parametrize("text", NOT_ELIDED.values(), ids=NOT_ELIDED.keys())
def test_literals_read_item_by_item_or_that_are_no_code_are_parsed_as_they_are(text):
    tree, regions = parse_elided(text)
    assert regions == []
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(text), include_attributes=True)


def _error(parse, text: str) -> tuple:
    with pytest.raises(SyntaxError) as raised:
        parse(text)
    error = raised.value
    return type(error), error.msg, error.lineno, error.offset, error.end_lineno, error.end_offset


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_a_text_that_does_not_parse_raises_python_s_own_error(text):
    assert _error(lambda t: parse_elided(t)[0], text) == _error(ast.parse, text)


def test_random_literals_parse_as_python_parses_them_and_each_elided_one_is_unknown(tmp_path):
    """Random displays of random data tokens (in a third of them, one that is not), on long lines: the same tree
    but for the elided displays, or the same error; the evaluator makes each elided display's own
    (Python's) node unknown."""
    rng = random.Random(1234)
    atoms = ["1", "-2", "0.5", "1e3", "0x1f", "3j", "None", "True", "'a'", '"b"', "b'c'", "'d' 'e'", "- - 4",
             "+5", "~6", "1_000", "()", "{}", "[]"]
    odd = ["x", "1 2", "'f' b'g'", "0777", "1.", "...", "*y", "a.b", "'\\x4'", ":", "1 if x else 2", "f'{x}'"]
    project = Project(root=str(tmp_path), python=jax_python())
    path = str(tmp_path / "m.py")
    elided = 0
    for round_number in range(16):
        def display(depth: int) -> str:
            kind = rng.choice("[({{")
            items = []
            for _ in range(rng.randrange(1, 6)):
                if depth < 3 and rng.random() < 0.3:
                    items.append(display(depth + 1))
                else:
                    items.append(rng.choice(atoms))
            if kind == "{" and rng.random() < 0.5:
                items = [f"{rng.choice(atoms[:12])}: {item}" for item in items]
            inside = ", ".join(items) + ("," if kind == "(" or rng.random() < 0.3 else "")
            return kind + inside + _CLOSE[kind]

        displays = [display(1) for _ in range(rng.randrange(1_500, 3_000))]
        if round_number % 3 == 0:  # one token that is no data, or no Python
            displays[rng.randrange(len(displays))] = f"[1, {rng.choice(odd)}]"
        rows = ", ".join(displays)
        opener = rng.choice(["[", "(", "{"])
        text = f"import numpy as np\nDATA = {opener}{rows}{_CLOSE[opener]}\nOTHER = np.asarray([{rows}])\n"
        try:
            original = ast.parse(text)
        except SyntaxError:
            assert _error(lambda t: parse_elided(t)[0], text) == _error(ast.parse, text)
            continue
        regions = _same_but_elided(text)
        elided += len(regions)
        model = ModuleModel(path, text, source=ParsedSource(text, original, split_lines(text)))
        starts = {_starts_at(text, region.start) for region in regions}
        for node in ast.walk(original):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and (node.lineno, node.col_offset) in starts:
                assert project.evaluator.value(model, node) is UNKNOWN, (round_number, ast.unparse(node)[:200])
    assert elided > 16  # most rounds elide both displays


_CLOSE = {"[": "]", "(": ")", "{": "}"}


def _starts_at(text: str, offset: int) -> tuple:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, len(text[line_start:offset].encode())


# Kernels with findings (the agreement fixtures'), then big literals in every kind of place, read by a kernel.
FIXTURES = ["bad_any.py", "bad_barrier.py", "bad_tpu_dma_semaphore_no_index.py", "good_regular.py"]
USER = """

def reads_the_tables(x_ref, o_ref):
    buf = pl.get_global(plgpu.GMEM((len(DATA), TABLE[1][0]), jnp.float32))
    o_ref[...] = x_ref[...] + buf[...] + MAPPING[3] + LOOPED


def launch_with_them():
    return plgpu.kernel(reads_the_tables, out_type=X, grid=GRID, scratch_types=SHAPES)
"""
LITERALS = {  # name -> items of the literal
    "DATA = [": [str(i) for i in range(N)],
    "TABLE = (": [f"({i}, {-i})" for i in range(N)],
    "MAPPING = {": [f"{i}: {i * 2}" for i in range(N)],
    "GRID = (": ["2"] * N,
    "SHAPES = [": ["plgpu.SMEM((128,), jnp.float32)"] + ["1"] * N,  # code: not elided
    "WORDS = [": [f"'w{i}'" for i in range(N)],
    "for LOOPED in (": [str(i) for i in range(N)],
    "FIRST, *REST = [": [str(i) for i in range(N)],
}


def _module(fixture: str, one_line: bool) -> str:
    literals = []
    for head, items in LITERALS.items():
        close = _CLOSE[head[-1]]
        tail = ":\n    pass" if head.startswith("for") else ""
        literals.append(head + (", ".join(items) if one_line else "\n" + ",\n".join(items) + ",\n") + close + tail)
    return (REPO / "tests" / "fixtures" / "agreement" / fixture).read_text() + USER + "\n" + "\n".join(literals) + "\n"


def test_check_reports_what_it_reports_for_the_literals_over_short_lines(tmp_path):
    for one_line in (True, False):
        folder = tmp_path / ("long" if one_line else "short")
        folder.mkdir()
        for fixture in FIXTURES:
            (folder / fixture).write_text(_module(fixture, one_line))
    assert len(parse_elided(_module(FIXTURES[0], True))[1]) == 5  # DATA, TABLE, MAPPING, GRID, WORDS
    assert parse_elided(_module(FIXTURES[0], False))[1] == []
    reports = {}
    for name in ("long", "short"):
        run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python",
                              jax_python(), "."], cwd=tmp_path / name, capture_output=True, text=True, timeout=600)
        assert run.returncode == 1, run.stderr[-3000:]
        reports[name] = json.loads(run.stdout)
    assert reports["long"] == reports["short"]
    assert {f["code"] for f in reports["long"]} >= {"PAL001", "PAL005"}, reports["long"]


def test_no_fix_edits_inside_an_elided_literal():
    """The trees a fix is built from hold `*...` there: an edit placed by them inside would write into
    values the fix never saw. Edits around the literal, or of its brackets' outside, are fine."""
    from pallas_lsp.analysis.findings import Span, TextEdit
    from pallas_lsp.fixes.edits import into_elided

    text = f"x = 1\nDATA = [{numbers()}]  # end\n"
    opening, closing = text.index("["), text.index("]")
    line_start = text.index("\n") + 1

    def edit(start: int, end: int) -> list:
        return [TextEdit("m.py", Span(1, start - line_start, 1, end - line_start), "2")]

    assert into_elided(text, edit(opening + 1, opening + 1))  # inserting right after `[`
    assert into_elided(text, edit(opening + 3, opening + 5))  # replacing a value
    assert into_elided(text, edit(opening - 3, closing + 1))  # replacing the whole literal
    assert not into_elided(text, edit(opening, opening))  # inserting before `[`
    assert not into_elided(text, edit(closing, closing))  # appending before `]`
    assert not into_elided(text, edit(closing + 1, closing + 1))
    assert not into_elided(text, [TextEdit("m.py", Span(0, 4, 0, 5), "2")])
    with_a_name = text.replace("DATA = [", "DATA = (").replace("]  #", ", x)  #")  # no data literal
    assert not into_elided(with_a_name, edit(opening + 3, opening + 5))
