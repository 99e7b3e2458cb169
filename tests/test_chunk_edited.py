"""A chunk edited in place (a keystroke in a big top-level statement) takes its names from the chunk it was and
the changed lines (`incremental.Chunk.edited`): exactly the chunk `Chunk.of` makes of the whole new text, over
random edits that remove a name's last use, add one, type digits before a name, and touch non-ASCII lines."""

import random

from pallas_lsp.analysis.incremental import Chunk

BASE = '''class A:
    def f(self, x):
        y = x + 1  # café
        z = 1abc + y
        return zed(y)

    def g(self):
        return f"{lambda_}" if True else None
'''
WORDS = ["x", "y", "zed", "abc", "1abc", "café", "lambda_", "if", "None", "q9", "_", "A", "g", "interpret_mode"]


def test_an_edited_chunk_is_the_chunk_of_its_new_text():
    rng = random.Random(41)
    text = BASE
    for trial in range(1500):
        lines = text.split("\n")
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(lines))
            line, at = lines[i], rng.randint(0, len(lines[i]))
            if rng.random() < 0.5:
                lines[i] = line[:at] + line[rng.randint(at, min(len(line), at + 6)):]
            else:
                lines[i] = line[:at] + rng.choice(WORDS) + line[at:]
        edited = "\n".join(lines)
        for bound in ([], ["A"]):
            old = Chunk.of(text, len(lines), False, bound)
            assert old.edited(text, edited) == Chunk.of(edited, len(lines), False, bound), (text, edited)
        if trial % 5 == 0:
            text = edited
