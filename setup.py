"""Ships the rule pages (docs/rules/*.md) inside the package, as pallas_lsp/rule_docs/, so that the
links of a pip-installed pallas-lsp's diagnostics open a page that is there. Every page in
docs/rules is picked up; nothing to list when a rule is added. The rest is in pyproject.toml."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

RULE_DOCS = Path(__file__).resolve().parent / "docs" / "rules"


class BuildWithRuleDocs(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "pallas_lsp" / "rule_docs"
        target.mkdir(parents=True, exist_ok=True)
        for page in sorted(RULE_DOCS.glob("*.md")):
            shutil.copyfile(page, target / page.name)


setup(cmdclass={"build_py": BuildWithRuleDocs})
