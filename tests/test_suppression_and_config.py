"""`# noqa` comments and select/ignore resolution."""

import re
from pathlib import Path

import pytest

from pallas_lsp.engine import selected_codes
from pallas_lsp.analysis.source import noqa_codes

SOURCE = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def body():
    pl.get_global(plgpu.SemaphoreType.BARRIER){comment}
"""


@pytest.mark.parametrize("comment,codes", [
    ("", ["PAL001"]),
    ("  # noqa", []),
    ("  # noqa: PAL001", []),
    ("  # noqa:PAL001,PAL002", []),
    ("  # NOQA: pal001", []),
    ("  # noqa: PAL002", ["PAL001"]),
    ("  # noqa: E501", ["PAL001"]),
    ("  # a comment, no suppression", ["PAL001"]),
])
def test_noqa(ws, comment, codes):
    assert [c[0] for c in ws.check(source=SOURCE.format(comment=comment))] == codes


def test_noqa_on_the_last_line_of_a_multiline_call(ws):
    source = SOURCE.format(comment="").replace("pl.get_global(plgpu.SemaphoreType.BARRIER)",
                                               "pl.get_global(\n        plgpu.SemaphoreType.BARRIER,\n    )  # noqa: PAL001")
    assert ws.check(source=source) == []


def test_noqa_parsing():
    assert noqa_codes("x = 1") is None
    assert noqa_codes("x = 1  # noqa") == set()
    assert noqa_codes("x = 1  # noqa: PAL001, PAL002") == {"PAL001", "PAL002"}


ALL_CODES = set(re.findall(r"^\| \[(PAL\d{3})\]", (Path(__file__).resolve().parents[1] / "README.md").read_text(),
                            re.MULTILINE))  # every rule the README lists
assert {"PAL000", "PAL011", "PAL012"} <= ALL_CODES  # the table was read


@pytest.mark.parametrize("select,ignore,expected", [
    (None, None, ALL_CODES),
    (["PAL001"], None, {"PAL001"}),
    (["PAL00"], ["PAL000"], {f"PAL00{n}" for n in range(1, 10)}),  # a prefix: PAL010 and PAL011 do not start with it
    (["PAL01"], None, {c for c in ALL_CODES if c.startswith("PAL01")}),
    (["ALL"], ["PAL002"], ALL_CODES - {"PAL002"}),
    ([], None, set()),
])
def test_select_ignore(select, ignore, expected):
    assert selected_codes(select, ignore) == expected


def test_syntax_newer_than_the_running_python_says_so(tmp_path):
    import glob
    import sys

    from conftest import Workspace

    newer = [p for p in glob.glob("/root/.pyenv/versions/3.1[3-9]*/bin/python3")]
    if sys.version_info >= (3, 13) or not newer:
        pytest.skip("needs an interpreter newer than the one running the tests")
    ws = Workspace(tmp_path, newer[0])
    source = "def pick[T = int](x: T) -> T:\n    return x\n"
    ((code, where, message),) = ws.check(source=source)
    assert (code, where) == ("PAL000", "1:9-1:30")
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert message.endswith(f"(pallas-lsp runs on Python {running} but the project uses 3.13: newer syntax is reported "
                            "as an error; run pallas-lsp under the newer Python)")
