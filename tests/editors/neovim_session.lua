-- One headless Neovim session, run by test_neovim.py:
--   nvim --headless -u NONE -i NONE -c "luafile tests/editors/neovim_session.lua"
-- The user's config (the tested block of docs/editors.md) is already in
-- $XDG_CONFIG_HOME/nvim/after/ftplugin/python.lua. This opens the kernel like a user would, and
-- writes what Neovim shows at each step to $PALLAS_EDITOR_RESULT as JSON; test_neovim.py asserts.

local result_path = assert(os.getenv("PALLAS_EDITOR_RESULT"))
local kernel = assert(os.getenv("PALLAS_EDITOR_FILE"))
local fixed_line = assert(os.getenv("PALLAS_EDITOR_FIXED_LINE"))
local wait_ms = tonumber(os.getenv("PALLAS_EDITOR_WAIT_MS") or "60000")

local result = {
  neovim = tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch,
  has_vim_lsp_start = vim.lsp.start ~= nil,
}
local step = "start"

local function save()
  result.step = step
  local file = assert(io.open(result_path, "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
end

local function check(ok, message)
  if not ok then
    error(message .. " (waited " .. wait_ms .. " ms)", 0)
  end
end

local function clients(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf)) -- Neovim 0.7
end

-- Diagnostics as Neovim holds them: 0-based lines, 0-based byte columns, end exclusive.
local function diagnostics(buf)
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(seen, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity == vim.diagnostic.severity.ERROR and "error" or tostring(d.severity),
      source = d.source, code = d.code or lsp.code, message = d.message,
    })
  end
  return seen
end

-- What `K` would request: hover at the cursor, put on the first match of `pattern`.
local function hover_at(buf, client, pattern)
  check(vim.fn.search(pattern, "cw") > 0, "no match for " .. pattern .. " in the buffer")
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local answers, err = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, wait_ms)
  check(answers ~= nil, "no hover answer: " .. tostring(err))
  local answer = answers[client.id] or {}
  local failure = answer.error or answer.err -- Neovim 0.7 / 0.10+
  check(failure == nil, "hover failed: " .. vim.inspect(failure))
  vim.fn.cursor(1, 1)
  if answer.result == nil or answer.result == vim.NIL then
    return vim.NIL
  end
  return { line = params.position.line, character = params.position.character, contents = answer.result.contents }
end

-- What `:lua vim.lsp.buf.code_action()` offers on the diagnostic's line, and the buffer after
-- choosing the preferred pallas-lsp PAL001 fix from the menu (vim.ui.select, answered here).
local function quick_fix(buf, client, original)
  local capabilities = client.server_capabilities or client.resolved_capabilities
  check(capabilities.codeActionProvider or capabilities.code_action, "the server offers no code actions")
  local diagnostic = vim.diagnostic.get(buf)[1]
  vim.api.nvim_win_set_cursor(0, { diagnostic.lnum + 1, diagnostic.col })
  local seen = { offered = {} }
  local select = vim.ui.select
  vim.ui.select = function(items, _, on_choice)
    local choice
    for _, item in ipairs(items) do
      local action = item.action or item[2] -- Neovim 0.10+ / 0.7
      table.insert(seen.offered, { title = action.title, kind = action.kind, isPreferred = action.isPreferred })
      if not choice and action.isPreferred and vim.startswith(action.title, "pallas-lsp (PAL001): ") then
        choice, seen.chosen = item, action
      end
    end
    on_choice(choice)
  end
  vim.lsp.buf.code_action()
  check(vim.wait(wait_ms, function() return #seen.offered > 0 end, 50), "no code action was offered")
  vim.ui.select = select
  check(seen.chosen ~= nil, "no preferred pallas-lsp (PAL001) quick fix among " .. vim.inspect(seen.offered))
  check(vim.wait(wait_ms, function() return #vim.diagnostic.get(buf) == 0 end, 50),
        "the diagnostic stayed after the quick fix: " .. vim.inspect(diagnostics(buf)))
  vim.wait(500)
  seen.after = diagnostics(buf)
  seen.text_before = table.concat(original, "\n") .. "\n"
  seen.text_after = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), "\n") .. "\n"
  return seen
end

-- How a user changes settings at run time: the client's `settings` (what it answers
-- workspace/configuration with) and workspace/didChangeConfiguration. The open buffer should be
-- re-checked without being edited; true if `shown` held within a few seconds.
local function change_settings(client, ignore, shown)
  local settings = { pallas = { ignore = ignore } }
  client.config.settings = settings -- Neovim 0.7 answers from here
  client.settings = settings -- Neovim 0.10+
  if vim.fn.has("nvim-0.10") == 1 then
    client:notify("workspace/didChangeConfiguration", { settings = settings })
  else
    client.notify("workspace/didChangeConfiguration", { settings = settings })
  end
  return vim.wait(10000, shown, 50)
end

-- The server's log lines (window/logMessage), still shown the usual way.
result.log_messages = {}
local show_log_message = vim.lsp.handlers["window/logMessage"]
vim.lsp.handlers["window/logMessage"] = function(err, params, ...)
  table.insert(result.log_messages, params.message)
  return show_log_message(err, params, ...)
end

-- The server's messages to the user (window/showMessage), still shown the usual way.
result.show_messages = {}
local show_message = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, params, ...)
  table.insert(result.show_messages, params.message)
  return show_message(err, params, ...)
end

local function session()
  vim.lsp.set_log_level("debug")
  result.lsp_log = vim.lsp.get_log_path()
  vim.cmd("filetype plugin on")

  step = "open the kernel and attach pallas-lsp"
  vim.cmd("edit " .. vim.fn.fnameescape(kernel))
  local buf = vim.api.nvim_get_current_buf()
  local original = vim.api.nvim_buf_get_lines(buf, 0, -1, true)
  check(vim.wait(wait_ms, function() return #clients(buf) > 0 end, 50), "pallas-lsp never attached to the buffer")
  local client = clients(buf)[1]
  result.client_name = client.name
  check(vim.wait(wait_ms, function() return client.initialized end, 50), "pallas-lsp never finished initialize")
  save()

  step = "wait for the diagnostic"
  check(vim.wait(wait_ms, function() return #vim.diagnostic.get(buf) > 0 end, 50), "no diagnostic appeared")
  vim.wait(300) -- a second, stray publish would show up here
  result.diagnostics = diagnostics(buf)
  save()

  step = "inlay hints and code lenses"
  local doc = { uri = vim.uri_from_bufnr(buf) }
  local function ask(method, params)
    local answers, err = vim.lsp.buf_request_sync(buf, method, params, wait_ms)
    check(answers ~= nil, "no " .. method .. " answer: " .. tostring(err))
    local answer = answers[client.id] or {}
    check((answer.error or answer.err) == nil, method .. " failed: " .. vim.inspect(answer.error or answer.err))
    return (answer.result ~= vim.NIL and answer.result) or {}
  end
  result.inlay_hints = {}
  for _, hint in ipairs(ask("textDocument/inlayHint", { textDocument = doc, range = {
      start = { line = 0, character = 0 }, ["end"] = { line = #original, character = 0 } } })) do
    table.insert(result.inlay_hints, hint.position.line .. ":" .. hint.position.character .. " " .. hint.label)
  end
  result.code_lenses = {}
  for _, lens in ipairs(ask("textDocument/codeLens", { textDocument = doc })) do
    table.insert(result.code_lenses, lens.range.start.line .. " " .. lens.command.title .. " " .. lens.command.arguments[2])
  end
  save()

  step = "trace a function whose arguments are not known"
  local traced = ask("workspace/executeCommand", { command = "pallas.trace", arguments = { doc.uri, "scale_twice" } })
  result.trace_unknown_args = {
    error = traced.error and traced.error.type,
    messages = result.show_messages,
    trace_diagnostics = #vim.tbl_filter(function(d) return d.source == "pallas-trace" end, diagnostics(buf)),
  }
  save()

  step = "hover on the get_global call"
  result.hover_get_global = hover_at(buf, client, [[get_global(]])
  save()

  step = "hover on a kernel parameter"
  result.hover_parameter = hover_at(buf, client, [[\<x_ref\>]])
  save()

  step = "fix the line and wait for the diagnostic to go"
  local line = result.diagnostics[1].lnum
  result.replaced = vim.api.nvim_buf_get_lines(buf, line, line + 1, true)[1]
  vim.api.nvim_buf_set_lines(buf, line, line + 1, true, { fixed_line })
  check(vim.wait(wait_ms, function() return #vim.diagnostic.get(buf) == 0 end, 50),
        "the diagnostic stayed after the fix: " .. vim.inspect(diagnostics(buf)))
  vim.wait(500) -- nothing may come back
  result.after_fix = diagnostics(buf)
  result.hover_after_fix = hover_at(buf, client, [[get_global(]])
  save()

  step = "restore the bug and wait for the diagnostic"
  vim.api.nvim_buf_set_lines(buf, 0, -1, true, original)
  check(vim.wait(wait_ms, function() return #vim.diagnostic.get(buf) > 0 end, 50), "the diagnostic did not come back")

  step = "change the settings: ignore PAL001, then not"
  result.settings_change = {
    cleared = change_settings(client, { "PAL001" }, function() return #vim.diagnostic.get(buf) == 0 end),
    back = change_settings(client, { "PAL002" }, function() return #vim.diagnostic.get(buf) > 0 end),
  }
  save()
  check(vim.wait(wait_ms, function() return #vim.diagnostic.get(buf) > 0 end, 50), "the diagnostic did not come back")

  step = "quick fix"
  result.quick_fix = quick_fix(buf, client, original)
  save()

  step = "open another file of the project"
  vim.cmd("edit " .. vim.fn.fnameescape(vim.fn.fnamemodify(kernel, ":h") .. "/other_kernel.py"))
  local other = vim.api.nvim_get_current_buf()
  check(vim.wait(wait_ms, function() return #clients(other) > 0 end, 50), "pallas-lsp never attached to the second file")
  result.second_file_client = clients(other)[1].id == client.id
  result.running_clients = #(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients())
  save()

  step = "stop pallas-lsp"
  vim.lsp.stop_client(client.id)
  result.server_stopped = vim.wait(10000, function() return client:is_stopped() end, 50)
  step = "done"
  save()
end

local ok, err = xpcall(session, debug.traceback)
if not ok then
  result.error = step .. ": " .. tostring(err)
  save()
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
