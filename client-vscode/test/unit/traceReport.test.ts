import { test } from "node:test";
import * as assert from "node:assert/strict";
import { normalizeTrace, renderReportHtml, renderReportText } from "../../src/traceReport";

// Shaped as `pallas-lsp trace --format json` answers (docs/trace.md).
const success = {
  ok: true,
  stage: "done",
  path: "/p/good_semaphore.py",
  function: "ordered_double",
  platform: "cuda",
  args: ["f32[2,128]"],
  args_source: "target()",
  kernels: [
    {
      name: "ordered_halves",
      location: { path: "/p/good_semaphore.py", line: 22, column: 0, function: "ordered_halves" },
      smem_bytes: 2048,
      launch_smem_bytes: 2048,
      barriers: 0,
      tmem_cols: 0,
      tmem_collective_cols: 0,
      gmem_semaphores: 1,
    },
  ],
  compiled: false,
  compile_skipped: "no GPU",
  jax: "0.12.0.1",
  jaxlib: "0.12.0",
  python: "3.12.4",
  lowering_platform: "cuda",
  timings: { import: 0.01, trace: 0.4, lower: 1.234, wall: 1.7 },
  worker: { cold: true, start_seconds: 3.5 },
};

test("a successful trace: one resource row per estimate, readable labels and units", () => {
  const report = normalizeTrace(success, "good_semaphore.py:22");
  assert.equal(report.ok, true);
  assert.equal(report.title, "pallas-lsp trace: ordered_double(f32[2,128])");
  assert.equal(report.toolFailure, false);
  assert.equal(report.summary, "JAX traced and lowered 1 kernel for cuda (not compiled: no GPU).");
  assert.deepEqual(report.kernels[0].rows, [
    ["Shared memory (SMEM)", "2,048 B (2.0 KiB)"],
    ["Shared memory at launch (with barriers)", "2,048 B (2.0 KiB)"],
    ["Barriers", "0"],
    ["TMEM columns", "0"],
    ["TMEM columns (collective)", "0"],
    ["Global semaphores", "1"],
  ]);
  assert.deepEqual(report.kernels[0].location, { uri: "file:///p/good_semaphore.py", line: 21, character: 0 });
  assert.deepEqual(report.versions, [["jax", "0.12.0.1"], ["jaxlib", "0.12.0"], ["Python", "3.12.4"], ["lowered for", "cuda"], ["arguments from", "target()"]]);
  assert.deepEqual(report.timings, [["import", "10 ms"], ["trace", "400 ms"], ["lower", "1.23 s"], ["wall", "1.70 s"], ["worker start (cold)", "3.50 s"]]);
  assert.deepEqual(report.notes, []);
});

test("the report says which launch of a kernel body was traced, and on which platform and why", () => {
  const report = normalizeTrace(
    { ...success, traced_because: "ordered_halves (line 23) is a kernel body: traced through ordered_double (line 39), which is the kernel that runs it",
      platform_reason: "host: the kernel runs in interpret mode, interpret=True (line 30), so it is traced as it runs, on the CPU (platform cuda lowers it for a GPU instead)" },
    "good_semaphore.py:30",
  );
  assert.deepEqual(report.notes, [
    "ordered_halves (line 23) is a kernel body: traced through ordered_double (line 39), which is the kernel that runs it",
    "Platform host: the kernel runs in interpret mode, interpret=True (line 30), so it is traced as it runs, on the CPU (platform cuda lowers it for a GPU instead)",
  ]);
  const text = renderReportText(report).split("\n");
  assert.deepEqual(text.slice(1, 4), [report.summary, ...report.notes]);
  assert.match(renderReportHtml(report, { cspSource: "csp", nonce: "n" }), /<p class="note">ordered_halves \(line 23\) is a kernel body/);
});

test("a failed trace: JAX's error keeps its source lines (Python's 1-based line, 0-based column)", () => {
  const report = normalizeTrace(
    {
      ok: false,
      function: "scale",
      args: [],
      kernels: [],
      error: {
        type: "NotImplementedError",
        message: "get_global only supports semaphores, got Ref<smem>{float32[128]}",
        stage: "lower",
        locations: [{ path: "/p/bad global.py", line: 27, column: 12, why: "get_global(SMEM)" }],
      },
    },
    "bad.py:27",
  );
  assert.equal(report.ok, false);
  assert.equal(report.summary, "JAX rejected this kernel (lower): NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}");
  assert.deepEqual(report.messages, [
    {
      severity: "error",
      text: "NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}",
      locations: [{ uri: "file:///p/bad%20global.py", line: 26, character: 12, why: "get_global(SMEM)" }],
    },
  ]);
  assert.match(renderReportText(report), /\n {2}at bad global.py:27 get_global\(SMEM\)/);
});

test("a notebook's locations name the cell and its line, as the command line does, and link to the cell", () => {
  const report = normalizeTrace(
    {
      ok: false,
      path: "/p/kernel.ipynb",
      function: "kernel",
      args: ["f32[128]"],
      notebook: { cells: [2, 3, 4, 5], cell: 5 },
      kernels: [],
      error: {
        type: "NotImplementedError",
        message: "get_global only supports semaphores, got Ref<smem>{float32[128]}",
        stage: "lower",
        locations: [{ path: "/p/kernel.ipynb", cell: 4, line: 5, column: 9, why: "get_global(Ref<smem>{float32[128]})" }],
      },
    },
    "kernel",
  );
  assert.deepEqual(report.messages[0].locations, [
    { uri: "file:///p/kernel.ipynb", cell: 4, line: 4, character: 9, why: "get_global(Ref<smem>{float32[128]})" },
  ]);
  assert.match(renderReportText(report), /\n {2}at kernel\.ipynb:cell 4:5 get_global\(Ref<smem>\{float32\[128\]\}\)$/);
  const html = renderReportHtml(report, { cspSource: "vscode-resource:", nonce: "abc123" });
  assert.ok(html.includes('data-uri="file:///p/kernel.ipynb" data-line="4" data-character="9" data-cell="4">kernel.ipynb:cell 4:5</a>'), html);
});

test("a notebook location's cell is numbered as the editor shows the notebook, from its cell document", () => {
  // Sent only the Python cells, the server counts cell 4 as its third; the editor knows the cell by its URI.
  const cellUri = "vscode-notebook-cell:/p/kernel.ipynb#W3sZmlsZQ%3D%3D";
  const answer = { ok: false, error: { type: "NotImplementedError", message: "m", stage: "lower",
    locations: [{ path: "/p/kernel.ipynb", cell: 3, cell_uri: cellUri, line: 5, column: 9 }] } };
  const shown = normalizeTrace(answer, "kernel", (uri) => (uri === cellUri ? 4 : undefined));
  assert.deepEqual(shown.messages[0].locations, [{ uri: "file:///p/kernel.ipynb", cell: 4, cellUri, line: 4, character: 9 }]);
  const unknown = normalizeTrace(answer, "kernel", () => undefined); // a notebook no longer open: the server's number
  assert.equal(unknown.messages[0].locations[0].cell, 3);
});

test("the traced code's own output is shown after JAX's error", () => {
  const report = normalizeTrace({ ok: false, error: { type: "TraceTimeout", message: "did not finish", stage: "worker" }, output: "step 1\nstep 2\n" }, "k.py:3");
  assert.equal(report.title, "pallas-lsp trace: k.py:3");
  assert.deepEqual(report.messages.map((m) => [m.severity, m.text]), [
    ["warning", "TraceTimeout: did not finish"],
    ["info", "Output of the traced code (last lines):\nstep 1\nstep 2"],
  ]);
});

test("the page escapes JAX's text, links source lines, and runs only its own nonce'd script", () => {
  const report = normalizeTrace(
    { ok: false, error: { type: "NotImplementedError", message: "got Ref<smem>{float32[128]}", locations: [{ path: "/p/bad.py", line: 5, column: 2 }] } },
    "bad.py",
  );
  const html = renderReportHtml(report, { cspSource: "vscode-resource:", nonce: "abc123" });
  assert.ok(html.includes("got Ref&lt;smem&gt;{float32[128]}"));
  assert.ok(!html.includes("Ref<smem>"));
  assert.ok(html.includes('data-uri="file:///p/bad.py" data-line="4" data-character="2">bad.py:5</a>'));
  assert.ok(html.includes("script-src 'nonce-abc123'"));
  assert.equal((html.match(/<script/g) ?? []).length, 1);
});

test("a failure of the tool is not put in JAX's words: unknown arguments", () => {
  const report = normalizeTrace(
    {
      ok: false,
      stage: "args",
      function: "ordered_double",
      args: [],
      kernels: [],
      platform: "cuda",
      suggested_args: "f32[2,128]",
      definition_line: 36,
      error: { type: "ArgsNotFound", stage: "args", locations: [], message: "no arguments to trace ordered_double with: no call of ordered_double(...) in this file" },
    },
    "good.py:37",
  );
  assert.equal(report.toolFailure, true);
  assert.equal(report.summary, "Not traced: no arguments to trace ordered_double with: no call of ordered_double(...) in this file");
  assert.deepEqual([report.suggestedArgs, report.definitionLine, report.function], ["f32[2,128]", 36, "ordered_double"]);
  const html = renderReportHtml(report, { cspSource: "x", nonce: "n" });
  assert.ok(html.includes("<h2>What went wrong</h2>") && !html.includes("What JAX said") && !html.includes("JAX could not"));
  assert.ok(!html.includes("--args"));
});

test("a report can be marked stale after an edit", () => {
  const report = normalizeTrace(success, "good.py");
  assert.ok(renderReportHtml(report, { cspSource: "x", nonce: "n", stale: true }).includes("this report is stale"));
  assert.ok(!renderReportHtml(report, { cspSource: "x", nonce: "n" }).includes("this report is stale"));
  assert.equal(renderReportText(report, true).split("\n")[1], "(stale: the file changed since this trace)");
});
