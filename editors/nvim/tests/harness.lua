-- A small describe/it harness for tests/child.lua, plus helpers shared by the specs.
local M = { cases = {}, before = {}, after = {} }

local prefix = {}

function _G.describe(name, fn)
  table.insert(prefix, name)
  local before_n, after_n = #M.before, #M.after
  fn()
  for i = #M.before, before_n + 1, -1 do
    table.remove(M.before, i)
  end
  for i = #M.after, after_n + 1, -1 do
    table.remove(M.after, i)
  end
  table.remove(prefix)
end

function _G.it(name, fn)
  local full = table.concat(prefix, " ") .. (#prefix > 0 and " " or "") .. name
  table.insert(M.cases, {
    name = full,
    fn = fn,
    before = vim.list_slice(M.before, 1, #M.before),
    after = vim.list_slice(M.after, 1, #M.after),
  })
end

function _G.before_each(fn)
  table.insert(M.before, fn)
end

function _G.after_each(fn)
  table.insert(M.after, fn)
end

--- Skips the running case (the reason is printed).
function M.skip_case(reason)
  error("KINTEST_SKIP: " .. reason, 0)
end

--- Marks the whole spec as skipped (e.g. no kin binary).
function M.skip(reason)
  M.skip_all = reason
end

-- Assertions -------------------------------------------------------------------------------

function M.eq(expected, actual, msg)
  if not vim.deep_equal(expected, actual) then
    error(("%sexpected %s, got %s"):format(msg and (msg .. ": ") or "", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function M.ok(cond, msg)
  if not cond then
    error(msg or "expected a true value", 2)
  end
  return cond
end

function M.contains(haystack, needle, msg)
  if type(haystack) ~= "string" or not haystack:find(needle, 1, true) then
    error(("%sexpected %s to contain %s"):format(msg and (msg .. ": ") or "", vim.inspect(haystack), vim.inspect(needle)), 2)
  end
end

function M.not_contains(haystack, needle, msg)
  if type(haystack) == "string" and haystack:find(needle, 1, true) then
    error(("%sexpected %s not to contain %s"):format(msg and (msg .. ": ") or "", vim.inspect(haystack), vim.inspect(needle)), 2)
  end
end

--- Waits for cond() to be truthy (processing events); errors with what was awaited. The default
--- is generous: what is awaited may need a real kin started, which a loaded machine slows.
function M.wait_for(cond, what, timeout)
  local value
  local ok = vim.wait(timeout or 30000, function()
    value = cond()
    return value
  end, 10)
  if not ok then
    error("timed out waiting for " .. (what or "a condition"), 2)
  end
  return value
end

--- The CPU time (user and system, in seconds) this Neovim has used so far. A bound on how long
--- Neovim is busy (frozen) is a bound on this, not on the clock: on a loaded machine the clock
--- runs on while Neovim waits for a core, and the same work takes several times as long.
function M.cpu_seconds()
  local ru = vim.uv.getrusage()
  return ru.utime.sec + ru.stime.sec + (ru.utime.usec + ru.stime.usec) / 1e6
end

-- UI doubles -------------------------------------------------------------------------------

--- Replaces vim.ui.select with a script: each call pops the next answer. An answer is a
--- function(items, opts) -> item, a string matched against the formatted items, or false
--- (dismiss). Every call is recorded in M.selects.
function M.script_select(answers)
  M.selects = {}
  vim.ui.select = function(items, opts, on_choice)
    local fmt = opts.format_item or tostring
    local labels = {}
    for i, it in ipairs(items) do
      labels[i] = fmt(it)
    end
    table.insert(M.selects, { prompt = opts.prompt, labels = labels, kind = opts.kind })
    local answer = table.remove(answers, 1)
    local choice, idx
    if type(answer) == "function" then
      choice = answer(items, opts, labels)
    elseif type(answer) == "string" then
      for i, l in ipairs(labels) do
        if l:find(answer, 1, true) then
          choice, idx = items[i], i
          break
        end
      end
      if not choice then
        error(("select %q: no item matches %q in %s"):format(opts.prompt or "", answer, vim.inspect(labels)))
      end
    end
    vim.schedule(function()
      on_choice(choice, idx)
    end)
  end
end

--- Replaces vim.ui.input: each call pops the next answer (a string, or false to dismiss; a
--- function(opts) gives it, asked while the input is open, as a person typing would be).
function M.script_input(answers)
  M.inputs = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(M.inputs, { prompt = opts.prompt, default = opts.default, completion = opts.completion })
    local answer = table.remove(answers, 1)
    if type(answer) == "function" then
      answer = answer(opts)
    end
    vim.schedule(function()
      if answer == false or answer == nil then
        on_confirm(nil)
      else
        on_confirm(answer)
      end
    end)
  end
end

--- Records vim.notify calls in M.notes.
function M.capture_notify()
  M.notes = {}
  vim.notify = function(msg, level, opts)
    table.insert(M.notes, { msg = msg, level = level, title = opts and opts.title })
  end
end

function M.notes_text()
  local parts = {}
  for _, n in ipairs(M.notes or {}) do
    parts[#parts + 1] = n.msg
  end
  return table.concat(parts, "\n")
end

--- A tiny HTTP server on 127.0.0.1 answering every request with status (a stand-in model
--- service for :checkhealth). Returns its base URL and a stop function.
function M.http_server(status)
  local server = vim.uv.new_tcp()
  server:bind("127.0.0.1", 0)
  server:listen(16, function()
    local conn = vim.uv.new_tcp()
    server:accept(conn)
    conn:read_start(function(_, data)
      if data and data:find("\r\n\r\n", 1, true) then
        conn:write(("HTTP/1.1 %d Whatever\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"):format(status), function()
          conn:close()
        end)
      elseif not data then
        conn:close()
      end
    end)
  end)
  local port = server:getsockname().port
  return ("http://127.0.0.1:%d/v1"):format(port), function()
    server:close()
  end
end

-- kin's window (kin.panel) -----------------------------------------------------------------

--- The panel's windows and buffers, or nil while it is closed.
function M.panel()
  local panel = require("kin.panel")
  if not panel.is_open() then
    return nil
  end
  return panel.windows()
end

function M.panel_body()
  local p = M.panel()
  return p and table.concat(vim.api.nvim_buf_get_lines(p.body_buf, 0, -1, false), "\n") or ""
end

function M.panel_choices()
  local p = M.panel()
  return p and vim.api.nvim_buf_get_lines(p.choices_buf, 0, -1, false) or {}
end

--- Waits until the panel shows a question whose body contains text.
function M.wait_panel(text, timeout)
  return M.wait_for(function()
    return M.panel() and M.panel_body():find(text, 1, true)
  end, "kin's window showing " .. vim.inspect(text), timeout)
end

--- Types keys as a person in kin's window would: go there (:KinAnswer), then the keys.
function M.press(keys)
  if not M.panel() then
    error("kin's window is not open", 2)
  end
  require("kin").answer()
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

--- What the screen shows on row (1-based), as a person would see it.
function M.screen_row(row)
  vim.cmd("redraw")
  local cells = {}
  for col = 1, vim.o.columns do
    cells[#cells + 1] = vim.fn.screenstring(row, col)
  end
  return (table.concat(cells):gsub("%s+$", ""))
end

--- The rows a window takes on the screen: first, last (1-based, inclusive), and its columns.
function M.win_rect(win)
  local pos = vim.api.nvim_win_get_position(win)
  local cfg = vim.api.nvim_win_get_config(win)
  local border = (cfg.relative ~= "" and cfg.border and cfg.border ~= "none" and #cfg.border > 0) and 1 or 0
  -- A float's border is counted on every side, whichever way its position is reported.
  return {
    top = pos[1] + 1 - border,
    bottom = pos[1] + vim.api.nvim_win_get_height(win) + 2 * border,
    left = pos[2] + 1 - border,
    right = pos[2] + vim.api.nvim_win_get_width(win) + 2 * border,
  }
end

--- Floating windows that cover any part of win.
function M.floats_over(win)
  local r = M.win_rect(win)
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if w ~= win and vim.api.nvim_win_get_config(w).relative ~= "" then
      local f = M.win_rect(w)
      if f.left <= r.right and f.right >= r.left and f.top <= r.bottom and f.bottom >= r.top then
        out[#out + 1] = w
      end
    end
  end
  return out
end

--- What the screen shows of win where no float covers it (covered cells read as spaces), row
--- by row, leaving out the first skip rows (a title bar).
function M.uncovered_text(win, skip)
  vim.cmd("redraw")
  local r = M.win_rect(win)
  local floats = {}
  for _, w in ipairs(M.floats_over(win)) do
    floats[#floats + 1] = M.win_rect(w)
  end
  local rows = {}
  for row = r.top + (skip or 0), r.bottom do
    local cells = {}
    for col = r.left, r.right do
      local covered = false
      for _, f in ipairs(floats) do
        covered = covered or (row >= f.top and row <= f.bottom and col >= f.left and col <= f.right)
      end
      cells[#cells + 1] = covered and " " or vim.fn.screenstring(row, col)
    end
    rows[#rows + 1] = (table.concat(cells):gsub("%s+$", ""))
  end
  return table.concat(rows, "\n")
end

-- Running one case -------------------------------------------------------------------------

local function rpc_trace()
  local ok, service = pcall(require, "kin.service")
  local client = ok and service.ctx.client or M.last_client
  if not client or not client.trace then
    return ""
  end
  return "RPC trace:\n  " .. table.concat(client.trace, "\n  ") .. "\n"
    .. (#client.stderr_tail > 0 and ("kin stderr:\n  " .. table.concat(client.stderr_tail, "\n  ") .. "\n") or "")
end

function M.run(index)
  local c = M.cases[index]
  local function call(fn)
    return xpcall(fn, debug.traceback)
  end
  local ok, err = true, nil
  for _, fn in ipairs(c.before) do
    ok, err = call(fn)
    if not ok then
      break
    end
  end
  if ok then
    ok, err = call(c.fn)
  end
  if not ok and err and tostring(err):find("KINTEST_SKIP", 1, true) then
    io.stdout:write(tostring(err):match("KINTEST_SKIP: ([^\n]*)") .. "\n")
    for _, fn in ipairs(c.after) do
      call(fn)
    end
    pcall(function()
      require("kin.service").stop()
    end)
    return "skip"
  end
  local trace = not ok and rpc_trace() or ""
  for _, fn in ipairs(c.after) do
    local aok, aerr = call(fn)
    if ok and not aok then
      ok, err = false, aerr
    end
  end
  if not ok then
    io.stdout:write(tostring(err) .. "\n" .. trace)
  end
  -- Stop the service so no process outlives the case.
  pcall(function()
    require("kin.service").stop()
  end)
  return ok and "ok" or "fail"
end

return M
