/**
 * The trace report: the server's `pallas.trace` answer (the result documented in docs/trace.md:
 * `ok`, `kernels` with JAX's Mosaic GPU resource estimate, `error` with source `locations`,
 * versions, `timings`) turned into what the user reads. Pure: `normalizeTrace` builds the model,
 * `renderReportHtml` the webview page, `renderReportText` the output channel's text.
 */

export interface SourceLocation {
  uri: string;
  /** 0-based, as in LSP; in a notebook (`cell`), a line of that cell. */
  line: number;
  character: number;
  /** A notebook's cell, as the notebook numbers them (1-based among all cells); `uri` is the notebook's. */
  cell?: number;
  /** That cell's document, as the server knows it (`cell_uri`). */
  cellUri?: string;
  why?: string;
}

export interface TraceMessage {
  severity: "error" | "warning" | "info";
  text: string;
  locations: SourceLocation[];
}

export interface KernelResources {
  name: string;
  location?: SourceLocation;
  /** Rows of the resource table: label and shown value. */
  rows: Array<[string, string]>;
}

export interface TraceReport {
  ok: boolean;
  /** Failed before JAX had its say (no arguments, no worker, a timeout): not a verdict on the code. */
  toolFailure: boolean;
  /** What the user is asked for when the arguments are unknown: a first guess, and where a comment goes. */
  suggestedArgs?: string;
  definitionLine?: number;
  function?: string;
  title: string;
  summary: string;
  /** What the server chose for the user, said under the summary: which launch of a kernel body, which platform and why. */
  notes: string[];
  kernels: KernelResources[];
  messages: TraceMessage[];
  versions: Array<[string, string]>;
  timings: Array<[string, string]>;
}

type Json = Record<string, unknown>;

/** JAX's estimate, in the order shown; other numeric fields follow with generated labels. */
const RESOURCES: Array<[string, string]> = [
  ["smem_bytes", "Shared memory (SMEM)"],
  // What Mosaic GPU's `_launch` compares with max_smem_bytes: the scratch, 8 bytes a barrier, the TMEM address.
  ["launch_smem_bytes", "Shared memory at launch (with barriers)"],
  ["barriers", "Barriers"],
  ["tmem_cols", "TMEM columns"],
  ["tmem_collective_cols", "TMEM columns (collective)"],
  ["gmem_semaphores", "Global semaphores"],
];
const NOT_RESOURCES = new Set(["name", "location", "function", "path"]);
const STAGES = ["import", "resolve", "trace", "lower", "compile", "total", "wall"];
/** Stages of a result that JAX never saw (the server's `failure(...)`). */
const TOOL_STAGES = new Set(["args", "worker"]);

/**
 * `cellNumber`: a cell document's number in its notebook as the editor shows it (1-based among all
 * cells), where the server, which is sent only the Python cells, numbers them otherwise.
 */
export function normalizeTrace(answer: unknown, fallbackTitle: string, cellNumber?: (cellUri: string) => number | undefined): TraceReport {
  const toLocation = (value: unknown) => locationOf(value, cellNumber);
  const root: Json = isObject(answer) ? answer : { ok: false, error: { type: "TraceError", message: String(answer) } };
  const ok = root.ok === true;
  const kernels = (Array.isArray(root.kernels) ? root.kernels : []).map((k, i) => normalizeKernel(k, i, toLocation));
  const fn = str(root.function);
  const args = Array.isArray(root.args) ? root.args.map(String).join(", ") : "";
  const title = `pallas-lsp trace: ${fn !== undefined ? `${fn}(${args})` : fallbackTitle}`;
  const platform = str(root.lowering_platform) ?? str(root.platform);
  const error = isObject(root.error) ? root.error : undefined;
  const messages: TraceMessage[] = [];
  if (error !== undefined) {
    const kind = str(error.type);
    const text = str(error.message) ?? "the trace failed";
    messages.push({
      severity: TOOL_STAGES.has(str(error.stage) ?? "") ? "warning" : "error",
      text: kind !== undefined ? `${kind}: ${text}` : text,
      locations: (Array.isArray(error.locations) ? error.locations : []).map(toLocation).filter(isDefined),
    });
  }
  const output = str(root.output)?.trim();
  if (output) {
    messages.push({ severity: "info", text: `Output of the traced code (last lines):\n${output.split(/\r?\n/).slice(-10).join("\n")}`, locations: [] });
  }
  const kernelCount = kernels.length === 1 ? "1 kernel" : `${kernels.length} kernels`;
  const compiled = root.compiled === true ? ", compiled" : str(root.compile_skipped) ? ` (not compiled: ${str(root.compile_skipped)})` : "";
  const stage = str(error?.stage) ?? str(root.stage);
  const toolFailure = !ok && stage !== undefined && TOOL_STAGES.has(stage);
  const firstLine = messages[0]?.text.split("\n")[0] ?? "no details";
  const summary = ok
    ? `JAX traced and lowered ${kernelCount}${platform ? ` for ${platform}` : ""}${compiled}.`
    : toolFailure
      ? `Not traced: ${str(error?.message) ?? firstLine}`
      : `JAX rejected this kernel (${stage ?? "trace"}${platform ? ` for ${platform}` : ""}): ${firstLine}`;
  const versions: Array<[string, string]> = [];
  for (const [key, label] of [["jax", "jax"], ["jaxlib", "jaxlib"], ["python", "Python"]] as const) {
    const value = str(root[key]);
    if (value !== undefined) versions.push([label, value]);
  }
  if (platform !== undefined) versions.push(["lowered for", platform]);
  const argsSource = str(root.args_source);
  if (argsSource !== undefined) versions.push(["arguments from", argsSource]);
  const timings: Array<[string, string]> = [];
  const rawTimings = isObject(root.timings) ? root.timings : {};
  for (const stage of STAGES) {
    if (typeof rawTimings[stage] === "number") timings.push([stage, seconds(rawTimings[stage] as number)]);
  }
  const worker = isObject(root.worker) ? root.worker : undefined;
  if (worker?.cold === true && typeof worker.start_seconds === "number") {
    timings.push(["worker start (cold)", seconds(worker.start_seconds)]);
  }
  const notes: string[] = [];
  const because = str(root.traced_because);
  if (because !== undefined) notes.push(because);
  const platformReason = str(root.platform_reason);
  if (platformReason !== undefined) notes.push(`Platform ${platformReason}`);
  const report: TraceReport = { ok, toolFailure, title, summary, notes, kernels, messages, versions, timings };
  if (fn !== undefined) report.function = fn;
  if (str(root.suggested_args) !== undefined) report.suggestedArgs = str(root.suggested_args);
  if (typeof root.definition_line === "number") report.definitionLine = root.definition_line;
  return report;
}

function normalizeKernel(value: unknown, index: number, toLocation: (value: unknown) => SourceLocation | undefined): KernelResources {
  const kernel: Json = isObject(value) ? value : {};
  const rows: Array<[string, string]> = [];
  for (const [key, label] of RESOURCES) {
    if (typeof kernel[key] === "number") rows.push([label, key.endsWith("bytes") ? bytes(kernel[key] as number) : String(kernel[key])]);
  }
  const known = new Set(RESOURCES.map(([key]) => key));
  for (const [key, raw] of Object.entries(kernel)) {
    if (!known.has(key) && !NOT_RESOURCES.has(key) && typeof raw === "number") {
      rows.push([humanize(key), key.endsWith("bytes") ? bytes(raw) : String(raw)]);
    }
  }
  return { name: str(kernel.name) ?? `kernel ${index + 1}`, location: toLocation(kernel.location), rows };
}

/** The runner's locations are Python's: 1-based `line`, 0-based `column`, a file `path`. */
function locationOf(value: unknown, cellNumber?: (cellUri: string) => number | undefined): SourceLocation | undefined {
  if (!isObject(value)) return undefined;
  const filePath = str(value.path);
  const uri = str(value.uri) ?? (filePath !== undefined ? fileUri(filePath) : undefined);
  if (uri === undefined || typeof value.line !== "number") return undefined;
  const location: SourceLocation = { uri, line: Math.max(0, value.line - 1), character: typeof value.column === "number" ? Math.max(0, value.column) : 0 };
  const cellUri = str(value.cell_uri);
  const cell = cellUri !== undefined ? (cellNumber?.(cellUri) ?? value.cell) : value.cell;
  if (typeof cell === "number" && cell >= 1) location.cell = cell;
  if (cellUri !== undefined && location.cell !== undefined) location.cellUri = cellUri;
  const why = str(value.why);
  return why !== undefined ? { ...location, why } : location;
}

function fileUri(filePath: string): string {
  return "file://" + filePath.split("/").map(encodeURIComponent).join("/");
}

/** Where a message or kernel points, as shown: `kernel.py:12`, in a notebook `kernel.ipynb:cell 4:5` (as the command line says it). */
export function locationLabel(location: SourceLocation): string {
  const last = decodeURIComponent(location.uri.split("/").pop() ?? location.uri);
  return location.cell !== undefined ? `${last}:cell ${location.cell}:${location.line + 1}` : `${last}:${location.line + 1}`;
}

export function renderReportHtml(report: TraceReport, options: { cspSource: string; nonce: string; stale?: boolean }): string {
  const link = (location: SourceLocation | undefined): string =>
    location === undefined
      ? ""
      : `<a href="#" class="source" data-uri="${esc(location.uri)}" data-line="${location.line}" data-character="${location.character}"${location.cell !== undefined ? ` data-cell="${location.cell}"` : ""}>${esc(locationLabel(location))}</a>`;
  const kernels = report.kernels
    .map(
      (kernel) => `
    <section class="kernel">
      <h2>${esc(kernel.name)} ${link(kernel.location)}</h2>
      <table>
        <thead><tr><th>Resource</th><th>Estimate</th></tr></thead>
        <tbody>${kernel.rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td class="value">${esc(v)}</td></tr>`).join("")}</tbody>
      </table>
    </section>`,
    )
    .join("");
  const messages = report.messages.length
    ? `<h2>${report.toolFailure ? "What went wrong" : "What JAX said"}</h2><ul class="messages">${report.messages
        .map(
          (m) =>
            `<li class="${esc(m.severity)}"><span class="severity">${esc(m.severity)}</span><pre>${esc(m.text)}</pre>` +
            (m.locations.length
              ? `<ul class="locations">${m.locations.map((l) => `<li>${link(l)}${l.why ? ` <code>${esc(l.why)}</code>` : ""}</li>`).join("")}</ul>`
              : "") +
            `</li>`,
        )
        .join("")}</ul>`
    : "";
  const table = (title: string, rows: Array<[string, string]>): string =>
    rows.length ? `<h3>${esc(title)}</h3><table class="facts">${rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("")}</table>` : "";
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${options.cspSource} 'nonce-${options.nonce}'; script-src 'nonce-${options.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${esc(report.title)}</title>
<style nonce="${options.nonce}">
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1.2em; }
  h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.4em; }
  .status { padding: .4em .8em; border-left: 4px solid; }
  .status.ok { border-color: var(--vscode-testing-iconPassed, #3fb950); }
  .status.failed { border-color: var(--vscode-errorForeground, #f85149); }
  .status.warning { border-color: var(--vscode-editorWarning-foreground, #d29922); }
  .stale { padding: .4em .8em; background: var(--vscode-inputValidation-warningBackground, #352a05); border: 1px solid var(--vscode-inputValidation-warningBorder, #b89500); }
  table { border-collapse: collapse; margin: .4em 0; }
  th, td { text-align: left; padding: .25em 1em .25em 0; border-bottom: 1px solid var(--vscode-panel-border, #444); }
  td.value { font-family: var(--vscode-editor-font-family); text-align: right; }
  ul.messages { list-style: none; padding: 0; }
  ul.messages > li { margin: .6em 0; }
  ul.locations { margin: .2em 0 0 1em; padding: 0; list-style: none; }
  .severity { text-transform: uppercase; font-size: .8em; font-weight: bold; }
  li.error .severity { color: var(--vscode-errorForeground, #f85149); }
  li.warning .severity { color: var(--vscode-editorWarning-foreground, #d29922); }
  pre { white-space: pre-wrap; margin: .3em 0; font-family: var(--vscode-editor-font-family); }
  a.source { font-family: var(--vscode-editor-font-family); }
</style></head>
<body>
<h1>${esc(report.title)}</h1>
${options.stale ? `<p class="stale">The file changed since this trace: this report is stale. Save and trace again for a fresh one.</p>` : ""}
<p class="status ${report.ok ? "ok" : report.toolFailure ? "warning" : "failed"}">${report.ok ? "✓" : report.toolFailure ? "!" : "✗"} ${esc(report.summary)}</p>
${report.notes.map((note) => `<p class="note">${esc(note)}</p>`).join("\n")}
${kernels}
${messages}
${table("Versions", report.versions)}
${table("Timings", report.timings)}
<script nonce="${options.nonce}">
  const vscode = acquireVsCodeApi();
  for (const a of document.querySelectorAll("a.source")) {
    a.addEventListener("click", (event) => {
      event.preventDefault();
      vscode.postMessage({ type: "open", uri: a.dataset.uri, line: Number(a.dataset.line), character: Number(a.dataset.character), cell: a.dataset.cell ? Number(a.dataset.cell) : undefined });
    });
  }
</script>
</body></html>`;
}

/** The report as plain text: for the output channel and for tests that read what the user reads. */
export function renderReportText(report: TraceReport, stale = false): string {
  const lines = [report.title, ...(stale ? ["(stale: the file changed since this trace)"] : []), report.summary, ...report.notes];
  for (const kernel of report.kernels) {
    lines.push("", `${kernel.name}${kernel.location ? ` (${locationLabel(kernel.location)})` : ""}`);
    for (const [k, v] of kernel.rows) lines.push(`  ${k}: ${v}`);
  }
  for (const m of report.messages) {
    lines.push(`${m.severity}: ${m.text}`);
    for (const l of m.locations) lines.push(`  at ${locationLabel(l)}${l.why ? ` ${l.why}` : ""}`);
  }
  if (report.versions.length) lines.push("", "versions: " + report.versions.map(([k, v]) => `${k} ${v}`).join(", "));
  return lines.join("\n");
}

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function humanize(key: string): string {
  const words = key.replace(/_/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}




function bytes(n: number): string {
  return n >= 1024 ? `${n.toLocaleString("en-US")} B (${(n / 1024).toFixed(1)} KiB)` : `${n} B`;
}

function seconds(n: number): string {
  return n < 1 ? `${(n * 1000).toFixed(0)} ms` : `${n.toFixed(2)} s`;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}



