"""Differential test against real JAX on generated kernels (issue 25): a fixed-seed sample of the grammar.

The rules need not agree with JAX on every generated kernel. So what is asserted is that the
generator's kernels are valid and JAX gives each a verdict a rule or a known semaphore error explains
(a failure for any other reason is a generator bug), and that agreement is exactly the recorded one:
a rule that gets better or worse changes the record, which is then rewritten deliberately with

    .venvs/dev/bin/python bench/agreement_generated.py --seed 0 --count 200 \
        --write-expected tests/kernel_generator/expected_seed0.json

The shrunk reproducers in tests/fixtures/generated_disagreements/ must keep their recorded verdicts
too: once a rule is fixed, one of them fails here and moves to tests/fixtures/agreement/.
"""

import ast
import json
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO
from kernel_generator import differential, grammar

pytestmark = [pytest.mark.jax, pytest.mark.slow]

SEED, COUNT = 0, 200
EXPECTED = REPO / "tests" / "kernel_generator" / "expected_seed0.json"
REPRODUCERS = FIXTURES / "generated_disagreements"


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return differential.evaluate(differential.generate(SEED, COUNT), tmp_path_factory.mktemp("generated"))


def test_generated_kernels_are_complete_modules(cases):
    """Every kernel parses and defines the target() a fixture has (what the oracle runs)."""
    for case in cases:
        tree = ast.parse(case.files[f"{case.name}.py"])
        assert "target" in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, case.name
        for text in case.files.values():
            ast.parse(text)


def test_jax_explains_every_verdict(cases):
    """JAX accepts each kernel or rejects it with a semaphore error; anything else is a generator bug."""
    unexplained = {c.name: f"{c.jax['exc_type']}: {c.jax['message']}" for c in cases if c.kind == "unexplained"}
    assert unexplained == {}


def test_agreement_is_the_recorded_one(cases):
    expected = json.loads(EXPECTED.read_text())
    assert (expected["seed"], expected["count"]) == (SEED, COUNT)
    found = {c.name: {"kind": c.kind, "jax": c.jax_verdict, "analyzer": sorted(c.codes)}
             for c in cases if c.kind != "agree"}
    changed = {name: {"recorded": expected["disagreements"].get(name, "agree"), "now": found.get(name, "agree")}
               for name in set(found) | set(expected["disagreements"])
               if found.get(name) != expected["disagreements"].get(name)}
    assert changed == {}, "agreement changed: rewrite the record (module docstring) if that is intended"


def test_reproducers_keep_their_recorded_verdicts(tmp_path):
    """Each shrunk disagreement still disagrees the recorded way (JAX's verdict and the analyzer's)."""
    verdicts = json.loads((REPRODUCERS / "VERDICTS.json").read_text())
    cases = [differential.Case(name, differential.spec_from_json(v["spec"]),
                               grammar.render(differential.spec_from_json(v["spec"]), name))
             for name, v in verdicts.items()]
    for case in cases:  # the checked-in file is what the spec renders to: nobody edited one without the other
        for file, text in case.files.items():
            assert (REPRODUCERS / file).read_text() == text, file
    differential.evaluate(cases, tmp_path)
    now = {c.name: {"jax": c.jax_verdict, "analyzer": sorted(c.codes)} for c in cases}
    assert now == {name: {"jax": v["jax"], "analyzer": v["analyzer"]} for name, v in verdicts.items()}


def test_shrinker_keeps_the_verdicts_and_drops_the_rest(tmp_path):
    """A kernel with a wrong type behind five incidental constructs shrinks to the bare wrong type."""
    noisy = grammar.Spec(items=(grammar.Item(what="gmem", arrival="dict", site="nested", use="ref_read"),),
                         entry="factory", axes="grid", wrapper="named_call", alias="assign")
    case = differential.Case("noisy", noisy, grammar.render(noisy, "noisy"))
    differential.evaluate([case], tmp_path)
    assert case.signature == ("PAL001", ("PAL001",))
    [shrunk] = differential.shrink([case], tmp_path / "shrink")
    assert shrunk.spec == grammar.Spec(items=(grammar.Item(what="gmem"),))
    assert shrunk.signature == case.signature


def test_bench_reports_every_kernel(tmp_path):
    """bench/agreement_generated.py: its JSON has every kernel, and the families add up."""
    out = tmp_path / "run.json"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "agreement_generated.py"), "--seed", "3", "--count", "4",
                          "--out", str(tmp_path / "k"), "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(out.read_text())
    assert [k["name"] for k in data["kernels"]] == [f"g3_{n:05d}" for n in range(4)]
    total = data["summary"]["total"]
    assert total["kernels"] == 4 == sum(total[k] for k in ("agree", "false_alarm", "miss", "wrong_rule", "wrong_line",
                                                              "unexplained"))
    assert sum(f["kernels"] for tag, f in data["summary"]["families"].items() if tag.startswith("family:")) == 4
    assert "| **all** | 4 |" in run.stdout
