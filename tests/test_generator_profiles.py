"""The generator's "meaningful" profile (issue 20): the same draws as the full grammar, with the three
constructs that have no meaning to preserve written as a person writes them; the full grammar, which the
agreement tests record, is not changed by it."""

import dataclasses
import random

from kernel_generator import differential, grammar


def test_meaningful_profile_draws_what_the_full_grammar_draws():
    full = differential.generate(3, 300)
    meant = differential.generate(3, 300, profile="meaningful")
    assert [c.name for c in full] == [c.name for c in meant]
    for a, b in zip(full, meant):
        assert dataclasses.replace(b.spec, items=()) == dataclasses.replace(a.spec, items=())
        assert [(i.what, i.arrival) for i in b.spec.items] == [(i.what, i.arrival) for i in a.spec.items]


def test_meaningful_profile_rewrites_only_the_three_constructs():
    rng = random.Random(7)
    for _ in range(2000):
        state = rng.getstate()
        full = grammar.random_spec(rng)
        rng.setstate(state)
        meant = grammar.random_spec(rng, profile="meaningful")
        for a, b in zip(full.items, meant.items):
            assert b.use == ("arrive_wait" if a.use == "barrier_wait" else a.use)
            assert b.site == ("into_launch" if a.site == "outside" and a.use != "unused" else a.site)
            shape = grammar.WHATS[a.what][2]
            assert b.index == (len(shape) if a.use in ("signal_wait", "signal", "read", "barrier_wait") else 0)


def test_barrier_wait_is_arrived_on_first():
    spec = grammar.meaningful(grammar.Spec(items=(grammar.Item(use="barrier_wait"),)))
    text = grammar.render(spec, "k")["k.py"]
    assert ("def body(x_ref, o_ref):\n"
            "  sem0 = pl.get_global(plgpu.SemaphoreType.REGULAR)\n"
            "  plgpu.barrier_arrive(sem0)\n"
            "  plgpu.barrier_wait(sem0)\n"
            "  o_ref[...] = x_ref[...] + 1.0\n") in text
    assert "use:arrive_wait" in text.splitlines()[0]


def test_barrier_of_a_semaphore_array_is_indexed_in_full():
    spec = grammar.meaningful(grammar.Spec(items=(grammar.Item(what="regular_4", use="barrier_wait"),)))
    text = grammar.render(spec, "k")["k.py"]
    assert "  plgpu.barrier_arrive(sem0.at[1])\n  plgpu.barrier_wait(sem0.at[1])\n" in text


def test_semaphore_array_gets_an_index_per_dimension_in_range():
    for what, view in (("regular", "sem0"), ("regular_4", "sem0.at[1]"), ("regular_2x3", "sem0.at[1, 2]")):
        for drawn in (0, 1, 3):
            spec = grammar.meaningful(grammar.Spec(items=(grammar.Item(what=what, use="signal", index=drawn),)))
            assert f"  pl.semaphore_signal({view})\n" in grammar.render(spec, "k")["k.py"], (what, drawn)


def test_global_semaphore_used_at_the_launch_is_passed_into_it():
    item = grammar.Item(site="outside", use="signal_wait")
    text = grammar.render(grammar.meaningful(grammar.Spec(items=(item,))), "k")["k.py"]
    assert ("def body(x_ref, sem0, o_ref):\n"
            "  pl.semaphore_signal(sem0)\n"
            "  pl.semaphore_wait(sem0)\n"
            "  o_ref[...] = x_ref[...] + 1.0\n") in text
    assert ("  def run(x):\n"
            "    sem0 = pl.get_global(plgpu.SemaphoreType.REGULAR)\n"
            "    return fn(x, sem0)\n") in text
    unused = grammar.Spec(items=(grammar.Item(site="outside"),))
    assert grammar.render(grammar.meaningful(unused), "k") == grammar.render(unused, "k")
