"""Where a first server start's memory goes, in process: the server's analyses of the corpus (one
Project on the jax package, each file set as an open text, analysed incrementally, models over the
budget dropped after each, as `server.py` does), with the peak resident set (ru_maxrss) after each
file, and the models each analysis built: how many, how much text, and under which question.

    PALLAS_LSP_CACHE_DIR="" PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/analysis_memory.py [--file REL] [--top 8]

`PALLAS_LSP_CACHE_DIR=""` as `server_memory.py` runs it for a first start (jedi answers every import).
`--file _src/pallas/mosaic/core.py` analyses that one file (relative to the jax package) in a fresh
process instead. A model is counted under the first parameter whose call sites were being searched
when it was built (`Evaluator.param_from_call_sites`), else "other" (the analysed file, importers
for kernels, import answers).
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_client import JAX_PYTHON, corpus_files, jax_package_dir  # noqa: E402


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    from pallas_lsp.analysis import Project
    from pallas_lsp.analysis import evaluate, model as model_module
    from pallas_lsp.engine import analyze_incremental, selected_codes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", help="one file of the jax package, analysed alone")
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--python", default=JAX_PYTHON)
    args = parser.parse_args(argv)
    root = str(jax_package_dir(args.python))
    files = [os.path.join(root, args.file)] if args.file else [str(f) for f in corpus_files(args.python)]

    questions: list[tuple[str, str, str]] = []
    built: collections.Counter = collections.Counter()
    texts: collections.Counter = collections.Counter()
    original_init = model_module.ModuleModel.__init__
    original_search = evaluate.Evaluator.param_from_call_sites

    def counting_init(self, path, text, *rest, **options):
        question = " ".join(questions[0]) if questions else "other"
        built[question] += 1
        texts[question] += len(text)
        original_init(self, path, text, *rest, **options)

    def searching(self, model, func_node, param):
        questions.append((os.path.relpath(model.path, root), getattr(func_node, "name", "?"), param))
        try:
            return original_search(self, model, func_node, param)
        finally:
            questions.pop()

    model_module.ModuleModel.__init__ = counting_init
    evaluate.Evaluator.param_from_call_sites = searching
    project = Project(root=root, python=args.python)
    project.environment  # noqa: B018 - started before the first figure, as the server does at initialize
    codes = selected_codes()
    print(f"after start: peak {peak_mib():.0f} MiB")
    previous = peak_mib()
    for path in files:
        before_models, before_text = sum(built.values()), sum(texts.values())
        text = Path(path).read_text()
        project.set_text(path, text)
        analyze_incremental(project, path, text, codes=codes)
        project.drop_models_over_budget(path)
        now = peak_mib()
        if now - previous >= 3 or args.file:
            print(f"{os.path.relpath(path, root)}: peak {now:.0f} MiB (+{now - previous:.0f}); "
                  f"{sum(built.values()) - before_models} models built, "
                  f"{(sum(texts.values()) - before_text) / 1e6:.2f} MB of text")
        previous = now
    print(f"peak {previous:.0f} MiB; {sum(built.values())} models built ({sum(texts.values()) / 1e6:.1f} MB of text); "
          f"by question (text, models):")
    for question, size in texts.most_common(args.top):
        print(f"  {size / 1e6:6.2f} MB {built[question]:4d}  {question}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
