-- kin.nvim: a thin Neovim client of `kin serve` (see rpc/PROTOCOL.md). No agent logic lives
-- here: every answer, tool call and decision comes from kin; this shows them and asks the person.
local config = require("kin.config")
local service = require("kin.service")
local chat = require("kin.chat")
local approval = require("kin.approval")
local elicitation = require("kin.elicitation")
local prompts = require("kin.prompts")
local documents = require("kin.documents")

local M = {}

M.version = service.VERSION

local notice_levels = {
  info = vim.log.levels.INFO,
  warning = vim.log.levels.WARN,
  warn = vim.log.levels.WARN,
  error = vim.log.levels.ERROR,
  debug = vim.log.levels.DEBUG,
}

-- One routing table for every notification kin sends.
local handlers = {
  ["turn/started"] = chat.on_turn_started,
  ["turn/delta"] = chat.on_turn_delta,
  ["turn/toolCall"] = function(p)
    require("kin.resources").on_tool_call(p)
    chat.on_tool_call(p)
  end,
  ["mcp/resourceUpdated"] = function(p)
    require("kin.resources").on_updated(p)
  end,
  ["turn/completed"] = chat.on_turn_completed,
  ["turn/plan"] = chat.on_plan,
  ["turn/reasoning"] = chat.on_reasoning,
  ["turn/usage"] = chat.on_usage,
  ["turn/steered"] = require("kin.branching").on_steered,
  ["commands/changed"] = require("kin.complete").on_changed,
  ["approval/request"] = approval.request,
  ["approval/resolved"] = approval.resolved,
  ["elicitation/request"] = elicitation.request,
  ["elicitation/resolved"] = elicitation.resolved,
  ["mcp/status"] = function(p)
    if p.server then
      service.ctx.mcp[p.server] = p
    end
    if p.state == "connected" then
      require("kin.resources").state.items = nil -- listed again on the next @
    end
  end,
  ["notice"] = function(p)
    local title = "kin" .. (p.source and (": " .. p.source) or "")
    service.notify(p.message or "", notice_levels[p.level] or vim.log.levels.INFO, title)
    chat.on_notice(p)
  end,
  ["workspace/didChangeFiles"] = documents.files_changed,
  ["review/finding"] = require("kin.review").on_finding,
  ["log/message"] = function(p)
    local level = notice_levels[p.level] or vim.log.levels.INFO
    if level >= (config.options.notify_level or vim.log.levels.WARN) then
      service.notify(p.message or "", level, "kin log")
    end
  end,
}

for method, fn in pairs(handlers) do
  service.handlers[method] = fn
end
service.request_handlers["workspace/applyEdit"] = documents.apply_edit
service.on_stop = {
  chat.on_service_stop,
  prompts.clear,
  documents.stop,
}
service.on_fail = { chat.release_switching }
service.on_ready = {
  documents.start,
  chat.on_service_ready,
}

--- Configures kin.nvim. Nothing starts until the first command needs the service.
---@param opts table? see |kin-options|
function M.setup(opts)
  config.set(opts)
  return M
end

--- :KinChat [question]
function M.chat(question)
  chat.open()
  if question and vim.trim(question) ~= "" then
    M.ask(question)
  end
end

--- Sends a question on the current session (opening the chat). A question kin does not take
--- is put into the chat's input buffer, so it is never lost.
function M.ask(question, on_started, on_failed)
  chat.open()
  chat.ask(question, on_started, function(err)
    chat.keep_in_input(question)
    if on_failed then
      on_failed(err)
    end
  end)
end

local MODES = {
  { mode = "ask", what = "reads only: nothing is changed or run" },
  { mode = "agent", what = "asks before every change and command (the default)" },
  { mode = "auto-edit", what = "applies edits inside the workspace without asking; asks for commands" },
}

--- :KinMode [mode] — sets the session's mode, or picks it.
function M.mode(mode)
  if mode and mode ~= "" then
    return chat.set_mode(mode)
  end
  local cur = chat.current().mode or "agent"
  vim.ui.select(MODES, {
    prompt = "kin: mode (now " .. cur .. ")",
    kind = "kin.mode",
    format_item = function(m)
      return ("%-9s  %s"):format(m.mode, m.what)
    end,
  }, function(m)
    if m then
      chat.set_mode(m.mode)
    end
  end)
end

--- One models/list row for a picker.
function M.format_model(m)
  local bits = {}
  if m.contextWindow then
    bits[#bits + 1] = require("kin.status").tokens(m.contextWindow) .. " context"
  end
  if m.efforts and #m.efforts > 0 then
    bits[#bits + 1] = "effort " .. table.concat(m.efforts, "/")
  end
  if m.images then
    bits[#bits + 1] = "images"
  end
  if m.configured == false then
    bits[#bits + 1] = "not configured: " .. tostring(m.missing or "?")
  end
  local name = (m.name and m.name ~= m.id) and (m.id .. " — " .. m.name) or m.id
  return ("%s  (%s)"):format(name, table.concat(bits, ", "))
end

--- :KinModel [model] [effort] — the session's model and reasoning effort, or pick them
--- (models/list).
function M.model(args)
  local words = vim.split(vim.trim(args or ""), "%s+", { trimempty = true })
  if chat.current().running then
    -- kin changes the model between turns only (session/configure answers -32011 during one):
    -- say so now, not after a choice that cannot be applied.
    return service.notify(chat.MODEL_MID_TURN, vim.log.levels.WARN)
  end
  if words[1] then
    return chat.set_model(words[1], words[2])
  end
  service.request("models/list", {}, function(r)
    chat.state.models = r.models
    local models = r.models or {}
    if #models == 0 then
      return service.notify("kin lists no models", vim.log.levels.WARN)
    end
    vim.ui.select(models, {
      prompt = "kin: model (now " .. tostring(chat.current().model or r.default or "?") .. ")",
      kind = "kin.model",
      format_item = M.format_model,
    }, function(m)
      if not m then
        return
      end
      if not m.efforts or #m.efforts == 0 then
        return chat.set_model(m.id)
      end
      local items = vim.list_extend({ "(none: the service decides)" }, m.efforts)
      vim.ui.select(items, { prompt = "kin: reasoning effort for " .. m.id, kind = "kin.effort" }, function(e)
        if e == nil then
          return
        end
        chat.set_model(m.id, e ~= items[1] and e or nil)
      end)
    end)
  end)
end

--- :KinCompact — summarises the conversation for the model now (session/compact).
function M.compact()
  local sid = chat.state.current
  if not sid then
    return service.notify("no session yet: nothing to compact")
  end
  local t = chat.transcript(sid)
  t.compacting = true
  require("kin.status").refresh()
  local function over()
    t.compacting = false
    require("kin.status").refresh()
  end
  service.request("session/compact", { sessionId = sid }, function(r)
    over()
    service.notify(r.compacted and "compacted: the model goes on from a summary and the recent turns" or "nothing to compact yet")
  end, function(err)
    over()
    service.notify("session/compact failed: " .. tostring(err.message), vim.log.levels.ERROR)
  end)
end

M.undo = chat.undo
M.fork = require("kin.branching").fork
M.rollback = require("kin.branching").rollback
M.retry = chat.retry
M.edit_last = chat.edit_last

--- :KinAnswer — moves the cursor into kin's window for the question it asks.
function M.answer()
  return prompts.focus()
end

--- The part :KinSend and :KinAttach take from a buffer: the selected lines (a range), else the
--- whole file.
local function buffer_part(buf, opts)
  local context = require("kin.context")
  if opts.range and opts.range > 0 then
    return context.selection(buf, opts.line1, opts.line2)
  end
  local part, err = context.file(buf)
  if not part then
    -- A buffer without a file: what it holds.
    return context.unnamed(buf, buf), err
  end
  return part
end

--- :[range]KinSend [question] — the selection (or the whole file) beside a question.
function M.send(opts)
  opts = opts or {}
  local buf = opts.buf or vim.api.nvim_get_current_buf()
  local part = buffer_part(buf, opts)
  local function go(question)
    if question == nil or vim.trim(question) == "" then
      return
    end
    M.ask({ { type = "text", text = question }, part })
  end
  if opts.question and vim.trim(opts.question) ~= "" then
    go(opts.question)
  else
    vim.ui.input({ prompt = "kin: ask about this: " }, go)
  end
end

--- :[range]KinAttach [file|selection|diagnostics|image {file}|clear] — context for the next
--- question.
function M.attach(opts)
  opts = opts or {}
  local context = require("kin.context")
  local what = opts.what or ""
  local buf = opts.buf or vim.api.nvim_get_current_buf()
  local part, err
  if what == "clear" then
    context.clear()
    return service.notify("nothing attached")
  elseif what == "diagnostics" then
    if opts.range and opts.range > 0 then
      part, err = context.diagnostics(buf, opts.line1, opts.line2)
    else
      part, err = context.diagnostics(buf)
    end
  elseif what == "file" then
    part, err = context.file(buf)
  elseif what == "image" then
    if not opts.path then
      return service.notify("KinAttach image: which file? (:KinAttach image {file})", vim.log.levels.ERROR)
    end
    part, err = context.image(opts.path)
  elseif what == "selection" or what == "" then
    part, err = buffer_part(buf, opts)
  else
    return service.notify("KinAttach: file, selection, diagnostics, image or clear, not " .. what, vim.log.levels.ERROR)
  end
  if not part then
    return service.notify(err or "nothing to attach", vim.log.levels.WARN)
  end
  context.attach(part)
  service.notify("attached " .. context.describe(part) .. " to the next question")
  return part
end

M.cancel = chat.cancel

--- :KinNew [--worktree[=BRANCH]] [title]
function M.new(args)
  local title, worktree = require("kin.worktree").parse_new(args)
  if worktree then
    return require("kin.worktree").new(title, worktree)
  end
  chat.new_session(title)
end

--- :KinWorktree [status|apply|remove] (remove! forces)
function M.worktree(sub, bang)
  require("kin.worktree").command(sub, bang)
end

--- A session time (RFC 3339, any fraction of a second) as local time a person reads:
--- "today 23:15", "yesterday 09:02", "2026-11-30 23:15".
function M.format_time(iso, now)
  if type(iso) ~= "string" then
    return ""
  end
  local y, mo, d, h, mi, sec, rest = iso:match("^(%d+)-(%d+)-(%d+)[T ](%d+):(%d+):(%d+)(.*)$")
  if not y then
    return iso
  end
  rest = rest:gsub("^[.,]%d+", "")
  local offset = 0
  local sign, oh, om = rest:match("^([+-])(%d%d):?(%d%d)$")
  if sign then
    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "+" and 1 or -1)
  end
  -- os.time reads the fields as local time; correct by this zone's own offset to get UTC.
  local fields = { year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(sec) }
  local as_local = os.time(fields)
  local utc_of_local = os.time(os.date("!*t", as_local))
  local stamp = as_local + (as_local - utc_of_local) - offset
  now = now or os.time()
  local day = os.date("%Y-%m-%d", stamp)
  if day == os.date("%Y-%m-%d", now) then
    return "today " .. os.date("%H:%M", stamp)
  elseif day == os.date("%Y-%m-%d", now - 86400) then
    return "yesterday " .. os.date("%H:%M", stamp)
  end
  return os.date("%Y-%m-%d %H:%M", stamp)
end

--- The folder sessions of this project work in.
function M.project_dir()
  local dir = config.options.cwd or vim.uv.cwd()
  local folders = config.options.workspace_folders
  if folders and folders[1] then
    dir = folders[1]
  end
  return vim.fs.normalize(vim.fn.fnamemodify(dir, ":p")):gsub("/$", "")
end

function M.format_session(s)
  local title = (s.title and s.title ~= "") and s.title or s.sessionId
  -- A subagent's session, under its parent's (kin.subagents.nest set depth): it opens read-only.
  local nest = (s.depth or 0) > 0 and (("  "):rep(s.depth) .. "↳ subagent: ") or ""
  return ("%s%s  (%d turn%s, %s)"):format(nest, title, s.turns or 0, (s.turns or 0) == 1 and "" or "s", M.format_time(s.updatedAt))
end

--- :KinSessions — pick a session of this project (or of every project) to resume or delete.
--- kin answers session/list a page at a time (50 rows); "Load more sessions" asks for the next
--- page with the answer's nextCursor and shows the picker again with every row loaded so far.
--- Subagents' sessions are listed too, each under its parent's. Sessions no person made at an
--- editor (`kin chat "question"`, a piped `kin chat`: they carry an `origin`) are left out by kin
--- (`interactive`); resuming one by its id still works.
function M.sessions(all, loaded)
  loaded = loaded or { sessions = {} }
  local params = { limit = 50, includeSubagents = true, interactive = true }
  if loaded.cursor then
    params.cursor = loaded.cursor
  end
  service.request("session/list", params, function(result)
    for _, s in ipairs(result.sessions or {}) do
      loaded.sessions[#loaded.sessions + 1] = s
    end
    loaded.cursor = result.nextCursor
    local sessions = loaded.sessions
    local project = M.project_dir()
    local mine, others = {}, 0
    for _, s in ipairs(sessions) do
      local cwd = s.cwd and vim.fs.normalize(s.cwd):gsub("/$", "")
      -- A session recorded before kin kept its folder (no cwd) could be of any project.
      if all or cwd == nil or cwd == project then
        mine[#mine + 1] = s
      else
        others = others + 1
      end
    end
    if #mine == 0 and others == 0 then
      service.notify("no sessions yet (:KinChat starts one)")
      return
    end
    local items = require("kin.subagents").nest(mine)
    if loaded.cursor then
      items[#items + 1] = { load = true, label = "Load more sessions" }
    end
    if others > 0 then
      items[#items + 1] = { more = true, label = ("Sessions of every project (%d more)"):format(others) }
    end
    vim.ui.select(items, {
      prompt = all and "kin: sessions of every project" or ("kin: sessions in " .. vim.fn.fnamemodify(project, ":~")),
      kind = "kin.sessions",
      format_item = function(s)
        if s.more or s.load then
          return s.label
        end
        local line = M.format_session(s)
        if all and s.cwd then
          line = line .. "  " .. vim.fn.fnamemodify(s.cwd, ":~")
        end
        return line
      end,
    }, function(s)
      if not s then
        return
      end
      if s.load then
        return vim.schedule(function()
          M.sessions(all, loaded)
        end)
      end
      if s.more then
        return vim.schedule(function()
          M.sessions(true)
        end)
      end
      vim.ui.select({ "Resume", "Delete" }, { prompt = s.title or s.sessionId }, function(action)
        if action == "Resume" then
          chat.resume(s.sessionId)
        elseif action == "Delete" then
          chat.delete(s.sessionId)
        end
      end)
    end)
  end)
end

function M.mcp()
  require("kin.mcp").open()
end

function M.grants()
  require("kin.grants").open()
end

--- :KinLog — opens the log file kin writes.
function M.log()
  local file = config.log_file()
  if not file then
    service.notify("log_file is off (setup({ log_file = ... }))", vim.log.levels.WARN)
    return
  end
  if vim.fn.filereadable(file) == 0 then
    service.notify("no log yet at " .. file, vim.log.levels.WARN)
    return
  end
  vim.cmd("split " .. vim.fn.fnameescape(file))
  vim.bo.autoread = true
  vim.cmd("normal! G")
end

--- :KinBuild — builds kin from the repository the plugin lives in, in the background (after a
--- `git pull`, say: lazy.nvim runs no build step for a `dir` spec); :KinRestart runs the new one.
function M.build()
  local build = require("kin.build")
  if not build.repo() then
    return service.notify("kin.nvim is not in the kin repository (no cmd/kin beside it): nothing to build", vim.log.levels.ERROR)
  end
  build.start(function(ok)
    if ok and service.is_running() then
      service.notify("kin is built; :KinRestart runs the new one")
    end
  end)
end

--- :KinRestart — stops the service and starts it again.
function M.restart()
  service.stop()
  service.with_client(function()
    service.notify("kin restarted")
  end)
end

--- Stops the service (also done on VimLeavePre).
M.stop = service.stop

--- The service's pid, or nil.
function M.pid()
  return service.ctx.client and service.ctx.client.pid or nil
end

return M
