"""The generator's "meaningful" profile (issue 20): the same draws as the full grammar, with the three
constructs that have no meaning to preserve written as a person writes them; the full grammar, which the
agreement tests record, is not changed by it."""

import dataclasses
import hashlib
import random

from kernel_generator import differential, grammar


def test_meaningful_profile_draws_what_the_full_grammar_draws():
    full = differential.generate(3, 300)
    meant = differential.generate(3, 300, profile="meaningful")
    assert [c.name for c in full] == [c.name for c in meant]
    for a, b in zip(full, meant):
        # sem_ref and, where the HLO interpreter needs it, sem_shape: the semaphore family's .at[] rewrite
        kept = dict(items=(), sem_ref="-", sem_shape="-")
        assert dataclasses.replace(b.spec, **kept) == dataclasses.replace(a.spec, **kept)
        assert [(i.what, i.arrival) for i in b.spec.items] == [(i.what, i.arrival) for i in a.spec.items]


def test_full_grammar_is_unchanged_by_the_profile():
    """The full grammar's rendered files, which the agreement tests record, hash as before the profile (and
    its semaphore-family rewrite) existed: seed 0 x 3000, both families, as in docs/benchmarks.md."""
    digest = hashlib.sha256()
    for case in differential.generate(0, 3000):
        for file, text in sorted(case.files.items()):
            digest.update(file.encode())
            digest.update(text.encode())
    assert digest.hexdigest().startswith("2c333200df3731ce")


def test_meaningful_profile_rewrites_only_the_three_constructs():
    rng = random.Random(7)
    for _ in range(2000):
        state = rng.getstate()
        full = grammar.random_spec(rng)
        rng.setstate(state)
        meant = grammar.random_spec(rng, profile="meaningful")
        for a, b in zip(full.items, meant.items):
            assert b.use == ("arrive_wait" if a.use == "barrier_wait" else a.use)
            moved = "body" if full.entry == "pallas_call" else "into_launch"
            assert b.site == (moved if a.site == "outside" and a.use != "unused" else a.site)
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


def test_pallas_call_makes_the_global_semaphore_in_its_body():
    """A pallas_call's operands are arrays: given a semaphore, jax 0.12 fails with "AbstractRef.update() got an
    unexpected keyword argument 'shape'", no semaphore error; what a person writes is the get_global in the body."""
    item = grammar.Item(site="outside", use="signal")
    text = grammar.render(grammar.meaningful(grammar.Spec(items=(item,), entry="pallas_call")), "k")["k.py"]
    assert ("def body(x_ref, o_ref):\n"
            "  sem0 = pl.get_global(plgpu.SemaphoreType.REGULAR)\n"
            "  pl.semaphore_signal(sem0)\n") in text
    assert "fn = pl.pallas_call(body, out_shape=X)\n  return fn, (X,)" in text


def test_semaphore_family_gets_an_index_per_dimension():
    for shape, ref, view in (("scalar", "at1", "sem)"), ("vec", "at2", "sem.at[0])"), ("vec", "whole", "sem.at[0])"),
                             ("scalar", "whole", "sem)"), ("vec", "load", "sem[0])")):
        spec = grammar.normalize(grammar.Spec(sem_launch="gpu", sem_shape=shape, sem_ref=ref))
        text = grammar.render(grammar.meaningful(spec), "k")["k.py"]
        assert f"  pl.semaphore_signal({view}\n" in text, (shape, ref)
    # the HLO interpreter's limit makes a viewed array scalar (normalize): it is then used whole
    spec = grammar.normalize(grammar.Spec(sem_launch="tpu_interpret_true", sem_shape="vec", sem_ref="whole",
                                          sem_op="wait_nodec"))
    meant = grammar.meaningful(spec)
    assert (meant.sem_shape, meant.sem_ref) == ("scalar", "whole")
