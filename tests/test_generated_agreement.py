"""Differential test against real JAX on generated kernels (issue 25): a fixed-seed sample of the grammar.

The rules do not agree with JAX on every generated kernel yet. So what is asserted is that the
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
