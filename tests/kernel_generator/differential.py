"""Generated kernels through real JAX and through `pallas-lsp`'s analysis: verdicts, agreement, shrinking.

JAX's verdict on a kernel is "ok" (it lowers, or runs in interpret mode) or the rule whose error it
raised (`expected_code` of tests/test_agreement_with_jax.py maps JAX's exception to a rule), or
"unexplained" when it failed in a way no rule covers: either a generator bug (fix the grammar) or a
semaphore error no rule encodes yet. The analyzer's verdict is the set of codes it reports on the
kernel's files, each at its lines. They agree when JAX accepts and nothing is reported, or when JAX's
rule is reported at the line JAX blames (`jax_truth`'s `locations` in the kernel's files: the user frame
of JAX's traceback, or, where JAX's error names no line, the candidates it could be; one of them must
carry the rule). JAX stops at its first error and a linter reports every one, so other findings beside
it (PAL005 on the wait after the signal JAX stopped at, another rule elsewhere) are not counted against
it. A kernel where JAX's rule is reported only on other lines is `wrong_line`. Where JAX blames no line
of the kernel's files, the rule alone is compared.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

from . import grammar

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
ORACLE = Path(__file__).with_name("oracle.py")


def jax_python() -> str:
    return os.environ.get("PALLAS_LSP_JAX_PYTHON", str(REPO / ".venvs" / "jax" / "bin" / "python"))


@dataclasses.dataclass
class Case:
    name: str
    spec: grammar.Spec
    files: dict[str, str]
    jax: dict | None = None
    jax_verdict: str | None = None
    codes: set[str] = dataclasses.field(default_factory=set)
    errors: set[str] = dataclasses.field(default_factory=set)  # the codes of error findings
    lines: dict = dataclasses.field(default_factory=dict)  # (file name, line) -> codes the analyzer reports there

    @property
    def jax_lines(self) -> set[tuple[str, int]]:
        """(file name, line) of the kernel's files that JAX blames."""
        blamed = set()
        for location in (self.jax or {}).get("locations") or ():
            file = os.path.basename(location["path"])
            if file in self.files:
                blamed.add((file, location["line"]))
        return blamed

    def lines_for(self, file: str, line: int) -> set[tuple[str, int]]:
        """Where a finding on what JAX blames at `file`:`line` may sit: that line, and where JAX blames a
        call of the kernel (`fn(x)`: JAX checks `out_shape` only when the kernel is called, and its
        traceback's user frame is the call) the lines that build the kernel, where that construct is written."""
        text = self.files[file].splitlines()
        at = {(file, line)}
        # The kernels a runner calls: `fn`, and `start`, the split async copy's first pallas_call.
        for kernel in ("fn", "start"):
            if 0 < line <= len(text) and re.search(rf"\b{kernel}\(", text[line - 1]):
                at |= {(file, n + 1) for n, src in enumerate(text) if re.match(rf"\s*{kernel} = ", src)}
        return at

    @property
    def kind(self) -> str:
        """agree, false_alarm (JAX accepts, the analyzer reports), miss (JAX fails, nothing reported),
        wrong_rule (both reject, for different reasons), wrong_line (JAX's rule, but not at JAX's line) or
        unexplained (JAX failed for no semaphore reason: a generator bug). A semaphore error no rule encodes
        ("unencoded") is a miss or wrong_rule."""
        if self.jax_verdict == "unexplained":
            return "unexplained"
        if self.jax_verdict == "ok":
            # A warning is no claim that JAX fails (PAL009 on a wait JAX compiles as decrementing, silently).
            return "agree" if not self.errors else "false_alarm"
        if self.jax_verdict in self.codes:
            blamed = self.jax_lines
            if not blamed or any(self.jax_verdict in self.lines.get(at, ())
                                 for file, line in blamed for at in self.lines_for(file, line)):
                return "agree"
            return "wrong_line"
        return "miss" if not self.codes else "wrong_rule"

    @property
    def signature(self) -> tuple:
        """What a shrunk kernel must keep: JAX's verdict and the analyzer's."""
        return self.jax_verdict, tuple(sorted(self.codes))

    def record(self) -> dict:
        return {"name": self.name, "kind": self.kind, "jax": self.jax_verdict, "analyzer": sorted(self.codes),
                "jax_lines": sorted(self.jax_lines),
                "analyzer_lines": sorted([file, line, sorted(codes)] for (file, line), codes in self.lines.items()),
                "tags": grammar.tags(self.spec), "spec": spec_to_json(self.spec),
                "jax_error": None if self.jax["ok"] else f"{self.jax['exc_type']}: {self.jax['message']}",
                "jax_result": self.jax}


def spec_to_json(spec: grammar.Spec) -> dict:
    return dataclasses.asdict(spec)


def spec_from_json(data: dict) -> grammar.Spec:
    items = tuple(grammar.Item(**item) for item in data["items"])
    return grammar.Spec(**{**data, "items": items})


FAMILIES = ("get_global", "semaphore")


def generate(seed: int, count: int, families: tuple[str, ...] = FAMILIES, profile: str = "full") -> list[Case]:
    """`count` kernels of the seed. Without the semaphore family, exactly the get_global kernels that the
    grammar gave before that family existed (its choices come from a stream of their own); `profile`: the
    grammar's (grammar.PROFILES), the same choices for both."""
    rng = random.Random(seed)
    sem_rng = random.Random(f"semaphore-{seed}") if "semaphore" in families else None
    cases = []
    for n in range(count):
        spec = grammar.random_spec(rng, sem_rng, profile)
        name = f"g{seed}_{n:05d}"
        cases.append(Case(name, spec, grammar.render(spec, name)))
    return cases


def write(cases: list[Case], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for case in cases:
        for file, text in case.files.items():
            (folder / file).write_text(text)


def run_jax(cases: list[Case], folder: Path, timeout: int = 60, nice: int = 19, compiled: bool = False) -> None:
    """JAX's verdict on every case, a few hundred kernels per process (jax imported once per process);
    `compiled`: an interpreted target is cross-lowered for CUDA instead (oracle.py `--compiled`)."""
    todo = {str(folder / f"{case.name}.py"): case for case in cases}
    while todo:
        paths = list(todo)[:300]
        cmd = ["nice", "-n", str(nice), jax_python(), str(ORACLE), "--timeout", str(timeout),
               *(["--compiled"] if compiled else []), *paths]
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
        got = 0
        for line in run.stdout.splitlines():
            result = json.loads(line)
            case = todo.pop(result.pop("path"))
            case.jax = result
            case.jax_verdict = jax_verdict(result)
            got += 1
        if got == 0:  # the process died on the first kernel of the batch: that kernel has no verdict
            path = paths[0]
            case = todo.pop(path)
            case.jax = {"ok": False, "exc_type": "OracleCrash", "message": run.stderr[-500:], "mode": None,
                        "locations": []}
            case.jax_verdict = "unexplained"


def reuse_jax(cases: list[Case], records: list[dict]) -> None:
    """JAX's verdicts from an earlier run's records (`Case.record`) of the same kernels, refused where a
    kernel's spec is not the recorded one (the grammar changed since)."""
    by_name = {record["name"]: record for record in records}
    for case in cases:
        record = by_name[case.name]
        if record["spec"] != json.loads(json.dumps(spec_to_json(case.spec))):
            raise ValueError(f"{case.name}: not the kernel of the earlier run (the grammar changed)")
        if "jax_result" in record:  # JAX's whole answer: mapped again, as rules and their mapping change
            case.jax = record["jax_result"]
            case.jax_verdict = jax_verdict(case.jax)
            continue
        exc_type, _, message = (record["jax_error"] or "").partition(": ")
        case.jax = {"ok": record["jax_error"] is None, "exc_type": exc_type or None, "message": message or None}
        case.jax_verdict = record["jax"]


# Semaphore errors of JAX that no rule encodes yet (issue 25, part 3): a kernel JAX rejects for one of
# these is a real bug in it, which the analyzer misses. ("Must signal/wait semaphores of the following types"
# is PAL013's now; non-decrementing waits and DMA semaphores that are no ref are PAL009's and PAL010's, and
# "Cannot signal/wait on a non-semaphore Ref" PAL014's.)
UNENCODED: tuple[tuple[str, str], ...] = ()


def jax_verdict(result: dict) -> str:
    if result["ok"]:
        return "ok"
    if result.get("callback_exc_type"):  # what JAX's GPU interpreter raised inside its callback
        if result["mode"] == "interpret" and result["callback_message"].startswith(
                ("Cannot lower jaxpr with effects", "No ir_type_handler for aval type")):
            # The interpreter lowers the kernel body for the CPU: a get_global in it fails there (PAL002),
            # as "effects" when its semaphore is signalled, with a cluster.
            return "PAL002"
        result = {**result, "exc_type": result["callback_exc_type"], "message": result["callback_message"]}
    for exc_type, words in UNENCODED:
        if result["exc_type"] == exc_type and words in (result["message"] or ""):
            return "unencoded"
    sys.path.insert(0, str(TESTS))
    from test_agreement_with_jax import expected_code

    try:
        return expected_code(result).split("|")[0]  # generated kernels give a struct to get_global, not scratch
    except AssertionError:
        return "unexplained"


def run_analyzer(cases: list[Case], folder: Path, project=None):
    """The analyzer's codes and lines on each case; returns the project, to reuse for the same folder."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze

    project = project or Project(root=str(folder), python=jax_python())
    for case in cases:
        case.codes, case.errors, case.lines = set(), set(), {}
        for file in case.files:
            findings = analyze(project, str(folder / file))
            for f in findings:
                case.codes.add(f.code)
                if f.severity == "error":
                    case.errors.add(f.code)
                case.lines.setdefault((file, f.span.line + 1), set()).add(f.code)
    return project


def evaluate(cases: list[Case], folder: Path, timeout: int = 60) -> list[Case]:
    write(cases, folder)
    run_jax(cases, folder, timeout)
    run_analyzer(cases, folder)
    return cases


def shrink(cases: list[Case], folder: Path, rounds: int = 30) -> list[Case]:
    """For each case, the simplest spec found with the same disagreement (greedy: each round tries every
    one-step simplification of every case still shrinking, all in one JAX process)."""
    best = {case.name: case for case in cases}
    active = list(best)
    pending: dict[str, grammar.Spec | None] = {}
    for n in range(rounds):
        candidates: dict[str, list[Case]] = {}
        for name in active:
            seen = {grammar.normalize(best[name].spec)}
            if pending.get(name) is not None:
                spec = grammar.normalize(pending[name])
                seen.add(spec)
                cname = f"{name}_s{n}_all"
                candidates.setdefault(name, []).append(Case(cname, spec, grammar.render(spec, cname)))
            for spec in grammar.shrink_candidates(best[name].spec):
                spec = grammar.normalize(spec)
                if spec not in seen:
                    seen.add(spec)
                    cname = f"{name}_s{n}_{len(candidates.setdefault(name, []))}"
                    candidates[name].append(Case(cname, spec, grammar.render(spec, cname)))
        batch = [c for group in candidates.values() for c in group]
        if not batch:
            break
        write(batch, folder)
        run_jax(batch, folder)
        run_analyzer(batch, folder)  # a new project each round: one made before this round's files misses them
        active = []
        for name, group in candidates.items():
            kept = [c for c in group if c.signature == best[name].signature and c.kind == best[name].kind]
            if kept:
                best[name] = min(kept, key=lambda c: (size(c.spec), c.name))
                active.append(name)
                # The other simplifications that kept it, all at once: tried first next round.
                combined = best[name].spec
                for other in kept:
                    combined = _merge(combined, other.spec, best[name].spec)
                pending[name] = combined if combined != best[name].spec else None
        if not active:
            break
    return [best[case.name] for case in cases]


def _merge(into: grammar.Spec, changed: grammar.Spec, base: grammar.Spec) -> grammar.Spec:
    """`into` with the one field `changed` changed relative to `base` (items compared whole)."""
    if changed.items != base.items:
        if len(changed.items) != len(base.items) or len(into.items) != len(base.items):
            return into
        items = tuple(c if c != b else i for i, c, b in zip(into.items, changed.items, base.items))
        return dataclasses.replace(into, items=items)
    diff = {f.name: getattr(changed, f.name) for f in dataclasses.fields(changed)
            if getattr(changed, f.name) != getattr(base, f.name)}
    return dataclasses.replace(into, **diff)


def distinct(cases: list[Case]) -> list[Case]:
    """One case per disagreement signature (kind and both verdicts): what is worth shrinking."""
    first: dict[tuple, Case] = {}
    for case in cases:
        if case.kind not in ("agree", "unexplained"):
            first.setdefault((case.kind, *case.signature), case)
    return list(first.values())


def size(spec: grammar.Spec) -> int:
    """How far a spec is from the simplest: the shrinker's measure."""
    return sum(len(text.splitlines()) for text in grammar.render(spec, "k").values())


def summarize(cases: list[Case]) -> dict:
    """Agreement overall and per construct family, false alarms and misses apart."""
    def tally(group):
        kinds = {}
        for case in group:
            kinds[case.kind] = kinds.get(case.kind, 0) + 1
        judged = len(group) - kinds.get("unexplained", 0)
        return {"kernels": len(group), "agree": kinds.get("agree", 0),
                "false_alarm": kinds.get("false_alarm", 0), "miss": kinds.get("miss", 0),
                "wrong_rule": kinds.get("wrong_rule", 0), "wrong_line": kinds.get("wrong_line", 0),
                "unexplained": kinds.get("unexplained", 0),
                "agreement": round(kinds.get("agree", 0) / judged, 4) if judged else None,
                "warned_ok": sum(1 for case in group if case.jax_verdict == "ok" and case.codes)}

    families: dict[str, list[Case]] = {}
    for case in cases:
        for tag in grammar.tags(case.spec):
            families.setdefault(tag, []).append(case)
    jax_verdicts: dict[str, int] = {}
    for case in cases:
        jax_verdicts[case.jax_verdict] = jax_verdicts.get(case.jax_verdict, 0) + 1
    return {"total": tally(cases), "jax_verdicts": dict(sorted(jax_verdicts.items())),
            "families": {tag: tally(group) for tag, group in sorted(families.items())}}
