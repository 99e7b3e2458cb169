"""A parameter's call sites are looked for in the importers whose text holds the function's name whole: a
module holding it only inside another name (`rescale` for `scale`) calls it nowhere, and is not modelled."""

import ast
import re

from pallas_lsp.analysis import Project
from pallas_lsp.analysis.model_patch import has_word, words_changed
from pallas_lsp.analysis.values import Const

FILES = {
    "util.py": "def scale(x):\n    y = x\n    return y * 2\n",
    "other.py": "import util\n\nrescale = util.__name__\n",  # imports util; `scale` only inside `rescale`
    "user.py": "from util import scale\n\nY = scale(4)\n",
}


def test_an_importer_holding_the_name_only_inside_another_is_not_searched(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", "")
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    project = Project(root=str(tmp_path), use_jedi=False)
    model = project.model(str(tmp_path / "util.py"))
    use = next(n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == "x" and isinstance(n.ctx, ast.Load))
    assert project.evaluator.value(model, use) == Const(4)
    assert str(tmp_path / "user.py") in project._models
    assert str(tmp_path / "other.py") not in project._models


def test_whole_names():
    assert has_word("y = kernel(x)", "kernel") and has_word("ops.kernel", "kernel") and has_word("kernel", "kernel")
    assert not has_word("kernels, kernel_sharding, my_kernel", "kernel")


def test_whole_names_as_a_regex_of_word_boundaries_finds_them():
    """`has_word` finds each occurrence and looks at its neighbours: the answer of `(?<!\\w)word(?!\\w)`, with
    Unicode word characters (letters, digits of any script, `_`) on either side, a later occurrence whole."""
    texts = ["kernel", "xkernel", "kernel_", "_kernel", "(kernel)", "kernelé", "ékernel", "kernel١", "kernel²",
             "ⅷkernel", "kernels kernel_x akernel", "kernels kernel_x akernel kernel", "a.kernel\n", "", "kerne"]
    for text in texts:
        expected = re.search(r"(?<!\w)kernel(?!\w)", text) is not None
        assert has_word(text, "kernel") == expected, text
    assert has_word("x = a.b", "a.b") and not has_word("ab", "a.b")  # no identifier: the text itself


def test_an_edit_adding_the_whole_name_beside_a_longer_one_forgets_what_read_it():
    """`rescale` held `scale` as text before and after: only the whole name came."""
    assert words_changed("rescale = 1\n", "rescale = 1\nscale(2)\n", ["scale"]) == ["scale"]
    assert words_changed("rescale = 1\n", "rescale = 2\n", ["scale"]) == []
