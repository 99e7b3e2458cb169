// Runs the integration suite (out/integration/index.js) inside a real VS Code: code-server's
// bundled VS Code server with --enable-smoke-test-driver, opened in headless Chromium through
// playwright-core, with the extension installed from dist/pallas-lsp.vsix.
//
// Everything lives in a fresh folder per run (client-vscode/.e2e/run-*): user data, extensions,
// a copy of test/e2e/workspace. Screenshots asked for by the suite are saved under
// $PALLAS_SCREENSHOTS_DIR (default build/screenshots: a test run never rewrites tracked files;
// scripts/refresh-screenshots.sh points it at docs/screenshots on purpose). Exit status: the
// suite's (0 when no step failed).
//
// Usage: node test/e2e/run.mjs [trusted|untrusted]. `untrusted` opens the workspace in VS Code's
// restricted mode (workspace trust on, never prompted), with a workspace setting naming another
// interpreter, and runs the suite's untrusted steps.
// Environment: PALLAS_E2E_PYTHON (the interpreter the extension is set to; default
// .venvs/jax/bin/python), CHROMIUM (default /usr/bin/chromium), PALLAS_E2E_TIMEOUT_S (default 420).
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionRoot = path.resolve(here, "../..");
const repo = path.resolve(extensionRoot, "..");
const codeServer = path.join(repo, "node_modules", "code-server");
const vsix = path.join(extensionRoot, "dist", "pallas-lsp.vsix");
const suite = path.join(extensionRoot, "out", "integration", "index.js");
const hostExtension = path.join(here, "..", "host-extension");
const python = process.env.PALLAS_E2E_PYTHON ?? path.join(repo, ".venvs", "jax", "bin", "python");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const timeoutMs = Number(process.env.PALLAS_E2E_TIMEOUT_S ?? 420) * 1000;
const screenshots = path.resolve(repo, process.env.PALLAS_SCREENSHOTS_DIR ?? path.join("build", "screenshots"));
const mode = process.argv[2] ?? "trusted";
if (mode !== "trusted" && mode !== "untrusted") {
  console.error(`e2e: unknown mode ${mode}: trusted or untrusted`);
  process.exit(2);
}

function fail(message) {
  console.error(`e2e: ${message}`);
  process.exit(2);
}

for (const [what, file] of [["code-server (npm install)", codeServer], ["the .vsix (npm run package)", vsix], ["the suite (node esbuild.mjs --tests)", suite], ["Chromium (apt-get install chromium)", browserPath], ["the interpreter (scripts/setup.sh)", python]]) {
  if (!fs.existsSync(file)) fail(`${what} is missing: ${file}`);
}
if (Number(process.versions.node.split(".")[0]) < 24) fail(`code-server needs Node 24; this is ${process.version}`);

const runs = path.join(extensionRoot, ".e2e");
fs.mkdirSync(runs, { recursive: true });
// Earlier runs are removed, except recent ones: another checkout user's run may still be going.
for (const old of fs.readdirSync(runs).filter((d) => d.startsWith(`run-${mode}-`))) {
  const folder = path.join(runs, old);
  if (Date.now() - fs.statSync(folder).mtimeMs > 30 * 60 * 1000) fs.rmSync(folder, { recursive: true, force: true });
}
const dir = fs.mkdtempSync(path.join(runs, `run-${mode}-`));
const workspace = path.join(dir, "workspace");
fs.cpSync(path.join(here, "workspace"), workspace, { recursive: true });
// The good kernel without its trace comment: the suite is asked for the arguments, then writes it.
fs.writeFileSync(
  path.join(workspace, "no_trace_comment.py"),
  fs.readFileSync(path.join(workspace, "good_kernel.py"), "utf8").replace(/^# pallas-lsp: trace\(.*\)\n/m, ""),
);
// The notebook again, for the trace step: the quick fix step fixes kernel.ipynb's kernel.
fs.copyFileSync(path.join(workspace, "kernel.ipynb"), path.join(workspace, "traced.ipynb"));
if (mode === "untrusted") {
  // What a cloned repository could carry: the extension must not run this program.
  fs.mkdirSync(path.join(workspace, ".vscode"));
  fs.writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify({ "pallas.interpreter": "./tools/not-python", "pallas.kernelTrace.timeout": 77 }));
}
const userDir = path.join(dir, "user");
const extensionsDir = path.join(dir, "extensions");
fs.mkdirSync(path.join(userDir, "User"), { recursive: true });
fs.writeFileSync(
  path.join(userDir, "User", "settings.json"),
  JSON.stringify(
    {
      "pallas.interpreter": python,
      ...(mode === "untrusted" ? { "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "never", "security.workspace.trust.banner": "never" } : {}),
      "workbench.startupEditor": "none",
      "workbench.editor.enablePreview": false, // opening a page must not close the kernel file
      "git.openRepositoryInParentFolders": "never",
      "workbench.colorTheme": "Default Dark Modern",
      "workbench.tips.enabled": false,
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "extensions.ignoreRecommendations": true,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "window.commandCenter": false,
      "chat.disableAIFeatures": true,
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "editor.fontSize": 14,
    },
    null,
    2,
  ),
);
const [pythonExecutable, jaxVersion] = execFileSync(python, ["-c", "import sys; from importlib.metadata import version; print(sys.executable); print(version('jax'))"], { encoding: "utf8" }).trim().split("\n");

const log = fs.openSync(path.join(dir, "server.log"), "a");
console.log(`e2e: run folder ${dir}; interpreter ${python} (jax ${jaxVersion})`);

// 1. Install the extension from the .vsix, as a user does.
const configFile = path.join(dir, "code-server.yaml");
fs.writeFileSync(configFile, "auth: none\ncert: false\n");
const install = execFileSync(
  process.execPath,
  [path.join(codeServer, "out", "node", "entry.js"), "--config", configFile, "--user-data-dir", userDir, "--extensions-dir", extensionsDir, "--install-extension", vsix],
  { encoding: "utf8", env: { ...process.env, HOME: dir } },
);
console.log(`e2e: ${install.trim().split("\n").pop()}`);

// 2. Start VS Code's server with the smoke-test driver (it honours the extension-tests payload).
const port = await freePort();
const server = spawn(
  process.execPath,
  [
    path.join(codeServer, "lib", "vscode", "out", "server-main.js"),
    "--host", "127.0.0.1",
    "--port", String(port),
    "--without-connection-token",
    "--accept-server-license-terms",
    "--enable-smoke-test-driver",
    ...(mode === "trusted" ? ["--disable-workspace-trust"] : []),
    "--disable-telemetry",
    "--user-data-dir", userDir,
    "--server-data-dir", path.join(dir, "server-data"),
    "--extensions-dir", extensionsDir,
  ],
  {
    env: { ...process.env, HOME: dir, PALLAS_E2E_DIR: dir, PALLAS_E2E_MODE: mode, PALLAS_E2E_WORKSPACE: workspace, PALLAS_E2E_JAX_VERSION: jaxVersion, PALLAS_E2E_PYTHON_EXECUTABLE: pythonExecutable, PALLAS_E2E_PYTHON_SETTING: python },
    stdio: ["ignore", log, log],
    detached: true,
  },
);
let browser;
const cleanup = async () => {
  await browser?.close().catch(() => {});
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {}
};
process.on("SIGTERM", async () => {
  await cleanup();
  process.exit(143);
});

let exitCode = 1;
try {
  await waitForHttp(`http://127.0.0.1:${port}/`, 60000);
  browser = await chromium.launch({
    executablePath: browserPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on("pageerror", (error) => fs.appendFileSync(path.join(dir, "browser.log"), `pageerror ${error.message}\n`));
  page.on("console", (message) => fs.appendFileSync(path.join(dir, "browser.log"), `${message.type()} ${message.text()}\n`));
  let reportExit;
  const exited = new Promise((resolve) => (reportExit = resolve));
  await page.exposeFunction("codeAutomationExit", (code) => reportExit(Number(code)));
  const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
  const payload = [
    ["extensionDevelopmentPath", remote(path.resolve(hostExtension))],
    ["extensionTestsPath", remote(suite)],
  ];
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);

  // Take the screenshots the suite asks for, until it reports its exit code.
  const checkpoints = path.join(dir, "checkpoints");
  let timer;
  const timedOut = new Promise((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  // Each action waits for the state it acts on (a button shown, a list row) as long as the suite
  // may still run, never a fixed 30 s: on a loaded machine the workbench renders slowly.
  const deadline = Date.now() + timeoutMs;
  const remaining = () => Math.max(1000, deadline - Date.now());
  let outcome;
  while (outcome === undefined) {
    outcome = await Promise.race([exited, timedOut, new Promise((resolve) => setTimeout(() => resolve(undefined), 250))]);
    if (fs.existsSync(checkpoints)) {
      for (const request of fs.readdirSync(checkpoints).filter((f) => f.endsWith(".request"))) {
        const name = request.replace(/\.request$/, "");
        const done = path.join(checkpoints, `${name}.done`);
        if (fs.existsSync(done)) continue;
        const { action, text, button, expect } = JSON.parse(fs.readFileSync(path.join(checkpoints, request), "utf8"));
        let answer = "ok";
        try {
          if (action === "cancel-progress") {
            // The progress notification of `pallas-lsp: Trace Kernel`, with its Cancel button.
            const item = page.locator(".notification-list-item", { hasText: "pallas-lsp: tracing" });
            const cancel = item.getByRole("button", { name: "Cancel" }).first();
            await cancel.waitFor({ state: "visible", timeout: remaining() });
            await cancel.click({ timeout: remaining() });
            console.log("e2e: clicked Cancel on the trace's progress notification");
          } else if (action === "find-notification" || action === "click-notification") {
            const item = page.locator(".notification-list-item", { hasText: text });
            const control = item.getByRole("button", { name: button }).first();
            await control.waitFor({ state: "visible", timeout: remaining() });
            if (action === "click-notification") await control.click();
            answer = `ok ${await item.count()}`;
            console.log(`e2e: ${action === "click-notification" ? "clicked" : "found"} the notification "${text}" with its button "${button}"`);
          } else if (action === "pick") {
            // A quick pick the extension opened (known by an entry it lists, `expect`): what it lists
            // is read, then the user types part of an entry and takes it with Enter.
            const rows = page.locator(".quick-input-widget .monaco-list-row");
            await rows.filter({ hasText: expect }).first().waitFor({ state: "visible", timeout: remaining() });
            const shown = (await rows.allInnerTexts()).map((row) => row.replace(/\s+/g, " ").trim());
            const input = page.locator(".quick-input-widget input.input");
            await input.fill(text);
            await rows.filter({ hasText: text }).first().waitFor({ state: "visible", timeout: remaining() });
            await input.press("Enter");
            answer = `ok ${shown.join(" | ")}`;
            console.log(`e2e: picked "${text}" in the quick pick`);
          } else if (action === "accept-input") {
            // An input box the extension opened: read what it is prefilled with, accept it as a user does.
            const input = page.locator(".quick-input-widget input.input");
            await input.waitFor({ state: "visible", timeout: remaining() });
            const value = await input.inputValue();
            await input.press("Enter");
            answer = `ok ${value}`;
            console.log(`e2e: accepted the input box prefilled with "${value}"`);
          } else {
            fs.mkdirSync(screenshots, { recursive: true });
            const file = path.join(screenshots, `${name}.png`);
            await page.screenshot({ path: file });
            fs.copyFileSync(file, path.join(dir, `${name}.png`));
            console.log(`e2e: screenshot ${path.relative(repo, file)}`);
          }
        } catch (error) {
          answer = `error: ${error.message}`;
          await page.screenshot({ path: path.join(dir, `${name}-error.png`) }).catch(() => {});
        }
        fs.writeFileSync(done, answer);
      }
    }
  }
  clearTimeout(timer);
  if (outcome === "timeout") {
    await page.screenshot({ path: path.join(dir, "timeout.png") }).catch(() => {});
    console.error(`e2e: the suite did not finish within ${timeoutMs / 1000} s (screenshot: ${path.join(dir, "timeout.png")})`);
  } else {
    exitCode = outcome;
  }
} catch (error) {
  console.error(`e2e: ${error.stack ?? error}`);
} finally {
  await cleanup();
}

const resultsFile = path.join(dir, "results.json");
const results = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, "utf8")) : [];
for (const r of results) console.log(`e2e: ${r.status.toUpperCase()} ${r.step} (${r.seconds.toFixed(1)} s)${r.detail ? `: ${r.detail.split("\n")[0]}` : ""}`);
if (exitCode !== 0 && fs.existsSync(path.join(dir, "test.log"))) {
  console.log("e2e: test.log:\n" + fs.readFileSync(path.join(dir, "test.log"), "utf8"));
}
const counts = ["pass", "fail", "skip"].map((s) => results.filter((r) => r.status === s).length);
console.log(`e2e: ${counts[0]} passed, ${counts[1]} failed, ${counts[2]} skipped; suite exit code ${exitCode}`);
console.log(`E2E_RESULTS ${JSON.stringify({ mode, exitCode, dir, results })}`);
process.exit(exitCode === 0 && counts[1] === 0 && results.length > 0 ? 0 : 1);

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`VS Code's server did not answer at ${url} within ${ms / 1000} s (see server.log)`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}
