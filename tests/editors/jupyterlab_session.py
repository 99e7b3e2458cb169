"""Run by .venvs/editors/bin/python (Playwright lives there) against a running JupyterLab: opens a
notebook in headless Chromium and writes what the user sees to a JSON file (tests/editors/test_jupyterlab.py).

    jupyterlab_session.py URL NOTEBOOK CHROMIUM RESULT.json SCREENSHOT.png
"""

import json
import sys

from playwright.sync_api import sync_playwright

WAIT_MS = 120_000  # jedi's first look at jax can take a while


def parameter_hover(page, line: str, name: str) -> str:
    """The language server's hover on `name` in the cell line `line`, as jupyterlab-lsp shows it: the
    mouse on the word with its modifier key (Control) held."""
    box = page.evaluate("""([line, name]) => {
        for (const element of document.querySelectorAll(".jp-Notebook .jp-Cell .cm-line")) {
            if (element.textContent !== line) continue;
            const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
            let offset = line.indexOf(name);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                if (offset < node.length) {
                    const range = document.createRange();
                    range.setStart(node, offset);
                    range.setEnd(node, Math.min(node.length, offset + name.length));
                    const r = range.getBoundingClientRect();
                    return {x: r.left + r.width / 2, y: r.top + r.height / 2};
                }
                offset -= node.length;
            }
        }
        return null;
    }""", [line, name])
    if box is None:
        return f"no cell line {line!r}"
    tooltip = page.locator(".lsp-tooltip")
    page.keyboard.down("Control")
    try:
        for _ in range(3):  # a move onto the word, then small moves on it: the extension reacts to mousemove
            page.mouse.move(box["x"] - 2, box["y"])
            page.mouse.move(box["x"], box["y"])
            try:
                tooltip.first.wait_for(timeout=10_000)
                break
            except Exception:  # noqa: BLE001 - try once more, then report what was seen
                continue
        else:
            return "no hover tooltip"
        return tooltip.first.inner_text()
    finally:
        page.keyboard.up("Control")


def main(url: str, notebook: str, chromium: str, result_path: str, screenshot: str) -> int:
    result = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/lab/tree/{notebook}")
            squiggles = page.locator(".jp-Notebook .jp-Cell .cm-lintRange-error")
            try:
                squiggles.first.wait_for(timeout=WAIT_MS)
            except Exception as exc:  # noqa: BLE001 - what the page showed is the answer
                result["error"] = f"no diagnostic in the notebook: {exc}"
                return 0
            cells = page.locator(".jp-Notebook .jp-Cell")
            result["squiggles_by_cell"] = [cells.nth(i).locator(".cm-lintRange-error").count() for i in range(cells.count())]
            result["squiggled_text"] = squiggles.all_inner_texts()
            squiggles.first.hover()
            tooltip = page.locator(".cm-tooltip-lint .cm-diagnostic")
            tooltip.first.wait_for(timeout=30_000)
            result["hover"] = [[text.inner_text(), source.inner_text()] for text, source in zip(
                tooltip.locator(".cm-diagnosticText").all(), tooltip.locator(".cm-diagnosticSource").all())]
            page.mouse.move(0, 0)  # the lint tooltip goes
            result["parameter_hover"] = parameter_hover(page, "def body(x_ref, o_ref, stage):", "stage")
        finally:
            page.screenshot(path=screenshot)
            browser.close()
            with open(result_path, "w") as file:
                json.dump(result, file)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
