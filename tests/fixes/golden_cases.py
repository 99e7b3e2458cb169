"""The golden fix cases in tests/fixes/golden/<case>/: what each one applies and where.

A case is `before.py` and `after.py` (or `before/` and `after/` folders for fixes spanning files)
plus `case.json`: {"code": the finding's code, "fix": the fix's title after "pallas-lsp (CODE): ",
"file": the file with the finding (default before.py), "run": the file whose target() JAX runs
(default: "file"), "jax": false when the fixed program is not meant to lower (a noqa fix), "compiled": true
when the fix makes an interpreted kernel compiled (its after side is cross-lowered for CUDA, though its
target() still says "interpret": `jax_lower.py --compiled`), "before": a
file or folder of tests/fixes/corpus/ to use as the before side instead of a copy of it (through `../`, any file of the repository: an example), "line": the
finding's 1-based line where several findings offer the same fix, "also_removes": codes of other findings
the fix removes with its own, "before_lowers": true when JAX accepts the original, silently doing otherwise than
its source says (a warning's finding: PAL009 compiled for a TPU)}.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass
class Case:
    name: str
    folder: Path
    code: str
    fix: str
    file: str
    run: str
    jax: bool
    source: Path | None = None  # the before side, when it is a corpus file or folder
    line: int | None = None  # the finding's line (1-based), where several offer the same fix
    compiled: bool = False  # the fixed kernel is compiled: JAX lowers its after side for CUDA
    # Other codes whose findings the fix removes with its own (a barrier's PAL006 fix that also makes a
    # Triton launch a Mosaic GPU one removes the get_global's PAL003).
    also_removes: tuple[str, ...] = ()
    before_lowers: bool = False  # JAX accepts the original (a warning: it compiles otherwise than written)


    @property
    def multi_file(self) -> bool:
        return (self.folder / "after").is_dir() or (self.folder / "before").is_dir()

    def path(self, which: str) -> Path:
        """The file JAX runs on the before or after side."""
        if which == "before" and self.source is not None:
            return self.source / self.run if self.multi_file else self.source
        if self.multi_file:
            return self.folder / which / self.run
        return self.folder / f"{which}.py"

    def names(self, which: str) -> dict[str, str]:
        """Workspace file name -> text, for the before or after side."""
        folder = self.source if which == "before" and self.source is not None else self.folder / which
        if self.multi_file:
            return {p.name: p.read_text() for p in sorted(folder.glob("*.py"))}
        path = self.path(which)
        return {"kernel.py": path.read_text()} if path.exists() else {}

    def workspace_file(self, name: str) -> str:
        return name if self.multi_file else "kernel.py"

    def copy(self, which: str, destination: Path) -> Path:
        destination.mkdir(parents=True, exist_ok=True)
        for name, text in self.names(which).items():
            (destination / name).write_text(text)
        return destination


def load_cases() -> list[Case]:
    cases = []
    for folder in sorted(p for p in GOLDEN.iterdir() if (p / "case.json").exists()):
        spec = json.loads((folder / "case.json").read_text())
        file = spec.get("file", "before.py")
        source = CORPUS / spec["before"] if "before" in spec else None
        cases.append(Case(folder.name, folder, spec["code"], spec["fix"], file, spec.get("run", file),
                          spec.get("jax", True), source, spec.get("line"), spec.get("compiled", False),
                          tuple(spec.get("also_removes", ())), spec.get("before_lowers", False)))
    return cases


def clear(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
