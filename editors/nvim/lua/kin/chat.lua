-- The chat: one transcript per session, a split showing the current one and an input buffer
-- below it. Questions go out with turn/start; everything shown comes from kin's notifications.
local service = require("kin.service")
local config = require("kin.config")
local transcript = require("kin.transcript")
local status = require("kin.status")
local subagents = require("kin.subagents")

local M = {}

---@class kin.ChatState
---@field current string?                         the session questions go to
---@field transcripts table<string, kin.Transcript> by sessionId
---@field draft kin.Transcript?                   shown before the first session exists
---@field win integer? transcript window
---@field input_win integer?
---@field input_buf integer?
---@field stale table<string, boolean>             sessions to resume after a restart
---@field switching {fn: function, failed: function}[]? questions asked while :KinNew, a
---                                                resume or the re-attachment after a restart
---                                                is on its way: they wait for all of them
---                                                (fields: open = switches under way, err)
---@field chosen integer?                          counts the switches the person asked for:
---                                                only the last one makes its session current
M.state = { transcripts = {}, stale = {} }

local function notify(msg, level)
  service.notify(msg, level)
end

function M.reset()
  M.state = { transcripts = {}, stale = {} }
end

--- The transcript of a session (created on first use).
---@return kin.Transcript
function M.transcript(session_id)
  local st = M.state
  if not session_id then
    if not st.draft or not st.draft:valid() then
      st.draft = transcript.new(nil)
    end
    return st.draft
  end
  local t = st.transcripts[session_id]
  if not t or not t:valid() then
    t = transcript.new(session_id)
    st.transcripts[session_id] = t
  end
  return t
end

--- The transcript shown now.
function M.current()
  return M.transcript(M.state.current)
end

local function valid_win(win)
  return win and vim.api.nvim_win_is_valid(win)
end

local function input_buffer()
  local st = M.state
  if st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf) then
    return st.input_buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, "kin://input")
  vim.bo[buf].filetype = "markdown"
  local km = config.options.chat.keymaps
  local function map(modes, lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = desc, nowait = true })
    end
  end
  map("n", km.send.n, M.send_input, "kin: send the question")
  map({ "i", "n" }, km.send.i, function()
    vim.cmd("stopinsert")
    M.send_input()
  end, "kin: send the question")
  map({ "n", "i" }, km.cancel, M.cancel, "kin: cancel the running turn")
  require("kin.complete").attach(buf, config.options.chat.complete ~= false)
  st.input_buf = buf
  return buf
end

local function map_transcript(t)
  if vim.b[t.buf].kin_mapped then
    return
  end
  vim.b[t.buf].kin_mapped = true
  local km = config.options.chat.keymaps
  local actions = require("kin.actions")
  local function map(lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, fn, { buffer = t.buf, desc = "kin: " .. desc, nowait = true })
    end
  end
  map(km.cancel, M.cancel, "cancel the running turn")
  map(km.close, M.close, "close the chat")
  map(km.retry, M.retry, "ask the last question again")
  map(km.edit_last, M.edit_last, "edit the last question and send it again")
  map(km.yank_code, actions.yank_code, "yank the code block under the cursor")
  map(km.put_code, actions.put_code, "put the code block under the cursor in your window")
  for _, lhs in ipairs(type(km.open) == "table" and km.open or { km.open }) do
    map(lhs, actions.open_location, "open the file or location under the cursor")
  end
  map(km.next_turn, function()
    actions.jump_turn(1)
  end, "next question")
  map(km.prev_turn, function()
    actions.jump_turn(-1)
  end, "previous question")
  -- Code blocks highlighted (fences, and the languages whose parsers are installed).
  pcall(vim.treesitter.start, t.buf, "markdown")
  require("kin.tsregion") -- a long transcript's highlighting follows the windows
end

local function set_win_opts(win)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].foldenable = false
end

--- Opens (or focuses) the chat split showing the current session.
function M.open()
  local st = M.state
  local t = M.current()
  map_transcript(t)
  local ibuf = input_buffer()
  if valid_win(st.win) then
    vim.api.nvim_win_set_buf(st.win, t.buf)
  else
    if valid_win(st.input_win) and #vim.api.nvim_list_wins() > 1 then
      pcall(vim.api.nvim_win_close, st.input_win, false)
    end
    local opts = config.options.chat
    local pos = opts.position
    if pos == "tab" then
      vim.cmd("tabnew")
    elseif pos == "left" or pos == "right" then
      vim.cmd((pos == "left" and "topleft" or "botright") .. " vsplit")
      vim.api.nvim_win_set_width(0, math.max(30, math.floor(vim.o.columns * opts.width)))
    else
      vim.cmd((pos == "above" and "topleft" or "botright") .. " split")
      vim.api.nvim_win_set_height(0, math.max(6, math.floor(vim.o.lines * opts.height)))
    end
    st.win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(st.win, t.buf)
    set_win_opts(st.win)
    transcript.fold_window(st.win)
    vim.wo[st.win].winbar = "%{%v:lua.require'kin.status'.winbar()%}"
    st.input_win = nil
  end
  if not valid_win(st.input_win) then
    vim.api.nvim_set_current_win(st.win)
    vim.cmd("belowright split")
    st.input_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(st.input_win, ibuf)
    vim.api.nvim_win_set_height(st.input_win, config.options.chat.input_height)
    vim.wo[st.input_win].winfixheight = true
    set_win_opts(st.input_win)
    vim.wo[st.input_win].winbar = "%{%v:lua.require'kin.chat'.input_winbar()%}"
  end
  local n = vim.api.nvim_buf_line_count(t.buf)
  pcall(vim.api.nvim_win_set_cursor, st.win, { n, 0 })
  vim.api.nvim_set_current_win(st.input_win)
end

--- The input window's title bar: what the next question attaches. Cut at its end when the
--- window is narrow (`%<` at the end), so its start stays readable.
function M.input_winbar()
  local parts = require("kin.context").state.attached
  if #parts == 0 then
    return " your question  (@file, #buffer, /command; :KinAttach adds context)%<"
  end
  local ctx = require("kin.context")
  local names = {}
  for _, p in ipairs(parts) do
    names[#names + 1] = ctx.describe(p)
  end
  return (" attached: " .. table.concat(names, " · ") .. "  (:KinAttach clear)"):gsub("%%", "%%%%") .. "%<"
end

--- Closes the chat windows (the buffers and the service stay).
function M.close()
  local st = M.state
  for _, win in ipairs({ st.input_win, st.win }) do
    if valid_win(win) and #vim.api.nvim_list_wins() > 1 then
      pcall(vim.api.nvim_win_close, win, false)
    end
  end
  st.win, st.input_win = nil, nil
end

--- Makes a session the current one and shows it if the chat is open.
local function set_current(session_id)
  local st = M.state
  st.current = session_id
  local t = M.transcript(session_id)
  if valid_win(st.win) then
    map_transcript(t)
    vim.api.nvim_win_set_buf(st.win, t.buf)
  end
  return t
end

-- What session/new and session/resume answered: the session object's mode, the result's model
-- and effort.
local function apply_result(t, result)
  M.apply_config(t, result.session)
  M.apply_config(t, result)
  require("kin.review").on_resume(result)
  require("kin.worktree").remember(result)
end

-- A session kin made (session/new's result): its configuration and instructions; it becomes the
-- current one, taking the choices made for the next session, when `current`.
local function made(t, result, current)
  if current then
    set_current(result.session.sessionId)
    M.state.next_mode, M.state.next_config = nil, nil
  end
  apply_result(t, result)
  t:instructions(result.instructions)
end

--- Runs fn(sessionId, created) with the current session, creating one (session/new) if needed
--- and re-attaching it (session/resume) after the service restarted. on_failed(err) runs when
--- there is no session to use.
local with_session
function with_session(fn, on_failed)
  local st = M.state
  local failed = on_failed or function() end
  if st.switching then
    -- The person asked for another session (:KinNew, :KinSessions): the question goes there.
    table.insert(st.switching, { fn = fn, failed = failed })
    return
  end
  local sid = st.current
  if sid and st.stale[sid] and not (service.ctx.client and service.ctx.ready) then
    -- kin is starting: the chat's own re-attachment (on_service_ready) goes first.
    service.with_client(function()
      with_session(fn, on_failed)
    end)
    return
  end
  if sid and st.stale[sid] then
    service.request("session/resume", { sessionId = sid }, function(result)
      st.stale[sid] = nil
      note_read_only(M.transcript(sid), result)
      M.show_pending(result)
      fn(sid, false)
    end, function(err)
      st.stale[sid] = nil
      if err.code == -32010 then
        -- Gone (deleted elsewhere): the question starts a new session.
        notify("session " .. sid .. " no longer exists; starting a new one", vim.log.levels.WARN)
        if st.current == sid then
          st.current = nil
        end
        with_session(fn, on_failed)
      else
        notify("session/resume failed: " .. tostring(err.message), vim.log.levels.ERROR)
        failed(err)
      end
    end)
    return
  end
  if sid then
    service.with_client(function()
      fn(sid, false)
    end)
    return
  end
  service.with_client(function()
    -- A question that cannot run must not leave an empty session behind.
    local model = service.ctx.init and service.ctx.init.model
    if model and model.configured == false then
      local err = { code = -32012, message = "the model service is not configured: " .. tostring(model.missing or "?") }
      notify(err.message, vim.log.levels.ERROR)
      return failed(err)
    end
    -- The person may pick another session (:KinNew, :KinSessions) before kin answers: the
    -- question still goes to the session made for it, but theirs stays current.
    local chosen = st.chosen
    service.request("session/new", M.new_session_params(), function(result)
      local new_sid = result.session.sessionId
      -- The draft buffer becomes this session's transcript.
      local draft = st.draft
      if draft and draft:valid() and not st.transcripts[new_sid] then
        draft:bind(new_sid)
        st.transcripts[new_sid] = draft
        st.draft = nil
      end
      made(M.transcript(new_sid), result, st.chosen == chosen)
      fn(new_sid, true)
    end, function(err)
      notify("session/new failed: " .. tostring(err.message), vim.log.levels.ERROR)
      failed(err)
    end)
  end)
end

--- The params of session/new: the project folder the session works in.
function M.new_session_params(title)
  local params = {}
  if title then
    params.title = title
  end
  -- A mode chosen before the session existed (:KinMode with no session yet).
  if M.state.next_mode then
    params.mode = M.state.next_mode
  end
  for k, v in pairs(M.state.next_config or {}) do
    params[k] = v
  end
  return params
end

-- What kin says a session is set to (session/new, session/resume, session/configure).
function M.apply_config(t, c)
  if type(c) ~= "table" then
    return
  end
  if c.mode then
    t.mode = c.mode
  end
  if c.model then
    t.model = c.model
  end
  if c.effort ~= nil or c.model then
    t.effort = c.effort ~= vim.NIL and c.effort or nil
  end
  status.refresh()
end

-- A session made for a question kin refused is removed again (it has no turn).
local function forget_new_session(sid)
  local st = M.state
  service.request("session/delete", { sessionId = sid }, function()
    local tr = st.transcripts[sid]
    st.transcripts[sid] = nil
    if st.current == sid then
      st.current = nil
    end
    if tr and tr:valid() and tr.empty then
      -- Back to a draft, shown where it was.
      tr:bind(nil)
      st.draft = tr
    end
  end, function() end)
end

-- A kin without input parts (before protocol's parts) refuses a list as `input`: -32602. A
-- kin that takes parts and refuses one names it ("input[1] (image): ..."): that refusal is the
-- person's to read, and the question must not go without what it attached.
local function refuses_parts(err, input)
  local msg = tostring(err.message):lower()
  return type(input) == "table" and err.code == -32602 and msg:find("input", 1, true) ~= nil
    and not msg:find("input%[%d+%]")
end

--- Sends a question on the current session (turn/start): a string, or input parts (see
--- kin.context). on_started(turnId, result) runs once kin accepted it; on_failed(err) when it
--- did not (the question then is the caller's to keep).
function M.ask(input, on_started, on_failed)
  if not input or (type(input) == "string" and vim.trim(input) == "") then
    return
  end
  local failed = on_failed or function() end
  with_session(function(sid, created)
    local function start(sent)
      service.request("turn/start", { sessionId = sid, input = sent }, function(result)
        local t = M.transcript(sid)
        t.last_input = input
        if result and result.command then
          -- A /command kin ran (it starts a turn only when it says so).
          t:command(sent, result.command)
          -- /mode and /model answer with the session's configuration after the change.
          local name = result.command.name
          if (name == "mode" or name == "model") and type(result.command.result) == "table" then
            M.apply_config(t, result.command.result)
          end
        end
        t.read_only = nil -- kin took a question: the session is this kin's now
        if result and result.turnId then
          t.running = true
          t.turn_id = result.turnId
          t.started_at = t.started_at or vim.uv.now()
          status.refresh()
        end
        if on_started then
          on_started(result and result.turnId, result)
        end
      end, function(err)
        if refuses_parts(err, sent) then
          -- Nothing was started: send the same question with its context as text.
          return start(require("kin.context").as_text(sent))
        end
        if M.busy_here(err) then
          notify("a turn is already running in this session (:KinCancel stops it); your question is kept", vim.log.levels.WARN)
        elseif err.code == -32011 then
          -- Open in another kin (another Neovim, another editor), or a log kin cannot write.
          M.transcript(sid).read_only = tostring(err.message)
          status.refresh()
          notify(M.read_only_text(err.message) .. "; your question is kept (:KinNew starts a session of your own)", vim.log.levels.WARN)
        else
          notify((err.message or "turn/start failed") .. "; your question is kept", vim.log.levels.ERROR)
        end
        if created then
          forget_new_session(sid)
        end
        failed(err)
      end)
    end
    start(input)
  end, failed)
end

--- Puts a question back into the input buffer (when kin did not take it), unless the person
--- already typed something else there.
function M.keep_in_input(text)
  if type(text) ~= "string" then
    return
  end
  local buf = input_buffer()
  local cur = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  if vim.trim(cur) == "" then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  end
end

--- Sends the input buffer's text, with what is attached (:KinAttach) and mentioned (`@file`,
--- `#buffer`) as input parts. It is cleared only once kin accepted the question: a question kin
--- refused (no model configured, a turn running, kin missing) stays where it was typed, and so
--- do its attachments.
function M.send_input()
  local buf = input_buffer()
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  if vim.trim(text) == "" then
    return
  end
  local context = require("kin.context")
  local attached = #context.state.attached
  -- While a turn runs here, what is sent joins it (kin.branching) instead of waiting.
  local branching = require("kin.branching")
  local send = branching.steers(M.current()) and branching.steer or M.ask
  send(context.input(text), function()
    if vim.api.nvim_buf_is_valid(buf) and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") == text then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    end
    for _ = 1, attached do
      table.remove(context.state.attached, 1)
    end
    pcall(vim.cmd, "redrawstatus!")
  end)
end

--- Whether kin refused a request because a turn runs on the session here (-32011 also means
--- "open in another kin" and "its log cannot be written": kin's message says which).
function M.busy_here(err)
  return err.code == -32011 and tostring(err.message):find("already running", 1, true) ~= nil
end

--- What a person reads about a session that is read-only here (kin's reason, said plainly).
function M.read_only_text(reason)
  reason = tostring(reason or "")
  if reason:find("another kin", 1, true) then
    return "this session is open in another kin (another Neovim, editor window or kin serve): it is read-only here until that one closes it"
  end
  return "this session is read-only here" .. (reason ~= "" and (": " .. reason) or "")
end

-- Marks a session read-only here, as session/resume says (or not).
local function note_read_only(t, result)
  t.read_only = result.readOnly and (result.readOnlyReason or "read-only") or nil
end

--- turn/cancel on the current session.
function M.cancel()
  local sid = M.state.current
  if not sid or not service.is_running() then
    notify("no turn is running", vim.log.levels.INFO)
    return
  end
  service.request("turn/cancel", { sessionId = sid }, function(result)
    if result and result.cancelled == false then
      local t = M.transcript(sid)
      if t.read_only then
        -- Its turns run in the kin that has it open: only that one can stop them.
        notify(M.read_only_text(t.read_only) .. "; a turn it runs can be stopped only there", vim.log.levels.WARN)
      else
        notify("no turn is running", vim.log.levels.INFO)
      end
    end
  end)
end

--- Starts a new session and shows it.
--- A switch of session that cannot arrive (kin stopped or could not start): the questions that
--- waited for it fail (their callers keep them), so nothing waits for ever.
function M.release_switching()
  local waiting = M.state.switching
  if not waiting then
    return
  end
  M.state.switching = nil
  local list = {}
  for i = #waiting, 1, -1 do
    table.insert(list, 1, table.remove(waiting, i))
  end
  for _, w in ipairs(list) do
    w.failed({ code = -32099, message = "kin stopped before the session was ready" })
  end
end

-- Marks a switch of session as under way: one the person asked for (`chosen`: :KinNew,
-- :KinSessions) or the chat's own re-attachment after a restart. Several can be under way at
-- once (:KinRestart then :KinNew), and kin answers them in any order; the questions asked
-- meanwhile wait until every one has answered, and then go, once each, to the session current
-- then. Only the switch the person asked for last may make its session current (latest()), so
-- that what they asked for last wins. Returns done(err), which ends this switch (err: it
-- failed; if it was the one asked for last, the waiting questions fail with it), and latest().
local function begin_switch(chosen)
  local st = M.state
  local waiting = st.switching or { open = 0 }
  st.switching = waiting
  waiting.open = waiting.open + 1
  local seq = st.chosen or 0
  if chosen then
    seq = seq + 1
    st.chosen = seq
  end
  local function latest()
    return (st.chosen or 0) == seq
  end
  local ended = false
  local function done(err)
    if ended then
      return
    end
    ended = true
    if st.switching ~= waiting then
      return -- released already (kin stopped): its questions were told
    end
    if err and chosen and latest() then
      waiting.err = err
    end
    waiting.open = waiting.open - 1
    if waiting.open > 0 then
      return
    end
    st.switching = nil
    for _, w in ipairs(waiting) do
      if waiting.err then
        w.failed(waiting.err)
      else
        with_session(w.fn, w.failed)
      end
    end
  end
  return done, latest
end

--- extra: more of session/new's params (a worktree: kin.worktree); on_err(err) reports a failure
--- instead of the default message.
function M.new_session(title, cb, extra, on_err)
  local done, latest = begin_switch(true)
  local params = vim.tbl_extend("force", M.new_session_params(title), extra or {})
  service.request("session/new", params, function(result)
    local sid = result.session.sessionId
    -- Not current when the person asked for another session meanwhile: that one wins.
    made(M.transcript(sid), result, latest())
    if latest() then
      M.open()
    end
    done()
    if cb then
      cb(sid)
    end
  end, function(err)
    if on_err then
      on_err(err)
    else
      notify("session/new failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end
    done(err)
  end)
end

--- Resumes a session: redraws its history and shows what still waits for an answer.
function M.resume(session_id, cb)
  local done, latest = begin_switch(true)
  service.request("session/resume", { sessionId = session_id }, function(result)
    M.state.stale[session_id] = nil
    local t = M.transcript(session_id)
    if latest() then
      set_current(session_id)
    end
    t:history(result.history)
    subagents.on_history(session_id, result.history)
    apply_result(t, result)
    -- Only a turn kin says it runs here can be stopped from here.
    t.running = result.runningTurnId ~= nil
    note_read_only(t, result)
    status.refresh()
    if result.readOnly then
      notify(M.read_only_text(result.readOnlyReason), vim.log.levels.WARN)
    end
    if latest() then
      M.open()
    end
    M.show_pending(result)
    done()
    if cb then
      cb(result)
    end
  end, function(err)
    notify("session/resume failed: " .. tostring(err.message), vim.log.levels.ERROR)
    done(err)
  end)
end

--- Shows again what kin still asks (session/resume's `pending`), each once.
function M.show_pending(result)
  for _, pending in ipairs(result and result.pending or {}) do
    if pending.options then
      require("kin.approval").request(pending)
    else
      require("kin.elicitation").request(pending)
    end
  end
end

--- After a restart: the current session is re-attached at once, so what kin still asks for it
--- (and for no session) is shown without waiting for the next question.
function M.on_service_ready()
  local st = M.state
  local sid = st.current
  if not (sid and st.stale[sid]) then
    return
  end
  -- A question asked meanwhile waits for this re-attachment instead of making its own. It is
  -- not the person's choice: it never makes its session current again.
  local done = begin_switch(false)
  service.request("session/resume", { sessionId = sid }, function(result)
    st.stale[sid] = nil
    local t = M.transcript(sid)
    if not t.running then
      t:history(result.history)
      subagents.on_history(sid, result.history)
    end
    apply_result(t, result)
    t.running = result.runningTurnId ~= nil
    note_read_only(t, result)
    M.show_pending(result)
    done()
  end, function(err)
    if err.code == -32010 then
      st.stale[sid] = nil
      if st.current == sid then
        st.current = nil
      end
    end
    -- Still stale otherwise: a waiting question tries the resume itself, and says why it failed.
    done()
  end)
end

--- Deletes a session (session/delete).
function M.delete(session_id, cb)
  service.request("session/delete", { sessionId = session_id }, function()
    local st = M.state
    local t = st.transcripts[session_id]
    st.transcripts[session_id] = nil
    if st.current == session_id then
      st.current = nil
      if valid_win(st.win) then
        vim.api.nvim_win_set_buf(st.win, M.current().buf)
      end
    end
    if t and t:valid() then
      pcall(vim.api.nvim_buf_delete, t.buf, { force = true })
    end
    notify("session deleted")
    if cb then
      cb()
    end
  end)
end

-- Notification handlers ----------------------------------------------------------------------

function M.on_turn_started(p)
  if subagents.take("turn/started", p) then
    return
  end
  local t = M.transcript(p.sessionId)
  t.running = true
  t.turn_id = p.turnId
  t.started_at = vim.uv.now()
  t:user(p.input, p.parts)
  status.refresh()
end

function M.on_turn_delta(p)
  if subagents.take("turn/delta", p) then
    return
  end
  M.transcript(p.sessionId):text(p.text)
end

-- The title bar is redrawn when what it says changes (a call's status, reasoning starting), not
-- at every piece of streamed output: while a turn runs, status's timer redraws it anyway.
function M.on_tool_call(p)
  if subagents.take("turn/toolCall", p) then
    return
  end
  local t = M.transcript(p.sessionId)
  local before = p.callId and t.tools[p.callId]
  before = before and before.status
  t:tool(p)
  subagents.on_delegate(p)
  if before == nil or before ~= p.status then
    status.refresh()
  end
end

-- A usage report for the gauge: one that counts no context tokens (a turn cancelled before the
-- model answered, from an older kin) keeps the count the gauge had, and a gauge that knows the
-- model's window (after a switch of model) keeps it until kin reports one.
local function take_usage(t, u)
  if type(u) ~= "table" or not tonumber(u.contextWindow) then
    return
  end
  local had = t.usage
  if (tonumber(u.contextTokens) or 0) <= 0 and had and (tonumber(had.contextTokens) or 0) > 0 then
    u = vim.tbl_extend("force", u, { contextTokens = had.contextTokens })
  end
  t.usage = u
end

function M.on_turn_completed(p)
  if subagents.take("turn/completed", p) then
    return
  end
  local t = M.transcript(p.sessionId)
  t:turn_end(p)
  t.started_at = nil
  t.compacting = false
  take_usage(t, p.usage)
  status.refresh()
end

function M.on_reasoning(p)
  if subagents.take("turn/reasoning", p) then
    return
  end
  local t = M.transcript(p.sessionId)
  local open = t.reasoning_open
  t:reasoning(p.text)
  if not open then
    status.refresh()
  end
end

function M.on_plan(p)
  if subagents.take("turn/plan", p) then
    return
  end
  M.transcript(p.sessionId):plan(p)
end

function M.on_usage(p)
  if subagents.take("turn/usage", p) then
    return
  end
  take_usage(M.transcript(p.sessionId), p)
  status.refresh()
end

--- :KinMode [mode] — the current session's mode (session/configure), or the next session's.
function M.set_mode(mode, cb)
  local st = M.state
  local sid = st.current
  if not sid then
    st.next_mode = mode
    M.current().mode = mode
    status.refresh()
    notify("the next session starts in mode " .. mode)
    if cb then
      cb({ mode = mode })
    end
    return
  end
  service.request("session/configure", { sessionId = sid, mode = mode }, function(result)
    local t = M.transcript(sid)
    M.apply_config(t, result)
    t:meta("[mode] " .. tostring(result and result.mode or mode))
    if cb then
      cb(result)
    end
  end)
end

M.MODEL_MID_TURN = "kin changes the model between turns: choose it again once this turn ends (:KinCancel stops it)"

-- After a switch of model, the gauge measures against the new model's window (models/list),
-- until the next turn reports its own usage.
local function gauge_for_model(t, model)
  local function apply(models)
    for _, m in ipairs(models or {}) do
      if m.id == model and tonumber(m.contextWindow) and t.usage then
        t.usage = vim.tbl_extend("force", t.usage, { contextWindow = m.contextWindow })
        status.refresh()
      end
    end
  end
  if M.state.models then
    return apply(M.state.models)
  end
  service.request("models/list", {}, function(r)
    M.state.models = r.models
    apply(r.models)
  end, function() end)
end

--- :KinModel — the session's model and reasoning effort (session/configure), or the next
--- session's when there is none yet.
function M.set_model(model, effort, cb)
  local st = M.state
  local sid = st.current
  local params = { model = model }
  if effort then
    params.effort = effort
  end
  if not sid then
    st.next_config = params
    M.apply_config(M.current(), params)
    notify(("the next session uses %s%s"):format(model, effort and (" (" .. effort .. ")") or ""))
    if cb then
      cb(params)
    end
    return
  end
  params.sessionId = sid
  service.request("session/configure", params, function(result)
    local t = M.transcript(sid)
    M.apply_config(t, result)
    gauge_for_model(t, result.model or model)
    t:meta(("[model] %s%s"):format(tostring(result.model or model), result.effort and (" (" .. result.effort .. ")") or ""))
    if cb then
      cb(result)
    end
  end, function(err)
    if M.busy_here(err) then
      notify(M.MODEL_MID_TURN, vim.log.levels.WARN)
    elseif err.code == -32011 then
      notify(M.read_only_text(err.message), vim.log.levels.WARN)
    else
      notify("session/configure failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end
  end)
end

--- :KinUndo [turnId] — puts back the files kin's tools changed in the last turn (turn/undo).
function M.undo(turn_id, cb)
  local sid = M.state.current
  if not sid then
    notify("no session yet: nothing to undo", vim.log.levels.INFO)
    return
  end
  service.request("turn/undo", { sessionId = sid, turnId = turn_id }, function(result)
    M.transcript(sid):undo(result)
    local n = #(result.restored or {})
    local c = #(result.conflicts or {})
    notify(("undid turn %s: restored %d file%s%s"):format(tostring(result.turnId), n, n == 1 and "" or "s",
      c > 0 and (", " .. c .. " left as they are (changed since)") or ""))
    if cb then
      cb(result)
    end
  end, function(err)
    if err.code == -32013 then
      notify("nothing to undo: " .. tostring(err.message), vim.log.levels.INFO)
    elseif M.busy_here(err) then
      notify("a turn is running: undo after it ends (:KinCancel stops it)", vim.log.levels.WARN)
    elseif err.code == -32011 then
      notify(M.read_only_text(err.message), vim.log.levels.WARN)
    else
      notify("turn/undo failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end
  end)
end

-- The last question sent in the current session (what this editor sent, else what kin showed).
local function last_question()
  local t = M.current()
  if t.last_input then
    return t.last_input
  end
  local lines = vim.api.nvim_buf_get_lines(t.buf, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == "## You" then
      local q = {}
      for j = i + 2, #lines do
        if lines[j] == "## kin" then
          break
        end
        q[#q + 1] = lines[j]
      end
      while #q > 0 and q[#q] == "" do
        q[#q] = nil
      end
      return table.concat(q, "\n")
    end
  end
end

--- :KinRetry — asks the last question again, as a new turn.
function M.retry()
  local q = last_question()
  if not q or q == "" then
    notify("no question to ask again", vim.log.levels.INFO)
    return
  end
  M.ask(q, nil, function()
    M.keep_in_input(q)
  end)
end

--- :KinEdit — puts the last question into the input to edit it and send it again.
function M.edit_last()
  local q = last_question()
  if not q or q == "" then
    notify("no question to edit", vim.log.levels.INFO)
    return
  end
  M.open()
  local buf = input_buffer()
  local text = q
  if type(q) == "table" then
    -- Parts: the text goes back into the input, what was attached (beyond the text's own
    -- mentions) back into the attachments.
    local context = require("kin.context")
    local texts = {}
    for _, p in ipairs(q) do
      if p.type == "text" then
        texts[#texts + 1] = p.text
      end
    end
    text = table.concat(texts, "\n\n")
    -- Each mention in the text accounts for one equal part; the rest were attached.
    local mentioned = {}
    for _, p in ipairs(context.mentions(text)) do
      local k = vim.inspect(p)
      mentioned[k] = (mentioned[k] or 0) + 1
    end
    context.clear()
    for _, p in ipairs(q) do
      local k = vim.inspect(p)
      if p.type ~= "text" then
        if (mentioned[k] or 0) > 0 then
          mentioned[k] = mentioned[k] - 1
        else
          context.attach(p)
        end
      end
    end
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  if valid_win(M.state.input_win) then
    vim.api.nvim_set_current_win(M.state.input_win)
    vim.api.nvim_win_set_cursor(M.state.input_win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

--- A notice that concerns one session also lands in its transcript.
function M.on_notice(p)
  if subagents.take("notice", p) then
    return
  end
  local sid = p.sessionId
  if not (sid and M.state.transcripts[sid]) then
    return
  end
  local function line()
    M.state.transcripts[sid]:meta(("> **%s:** %s"):format(p.level or "info", p.message or ""))
  end
  if p.source == "compacting" then
    -- A compaction started: the title bar says so until its `compaction` notice (or the turn's
    -- end) comes.
    M.state.transcripts[sid].compacting = true
    return status.refresh()
  end
  if p.source == "compaction" then
    M.state.transcripts[sid].compacting = false
    status.refresh()
  end
  if p.source ~= "compaction" or p.level == "error" or p.level == "warning" then
    return line()
  end
  -- A compaction: the notice does not carry the summary, the history's newest items do. The
  -- summary is what the model goes on from, so the person gets to read it (folded), where the
  -- notice arrived (the answer goes on streaming meanwhile).
  local t = M.state.transcripts[sid]
  if not t:valid() then
    return
  end
  local key = "compaction:notice:" .. vim.api.nvim_buf_line_count(t.buf)
  t:compaction({ notice = p }, key)
  service.request("session/resume", { sessionId = sid, limit = 20 }, function(result)
    local item
    for _, it in ipairs(result and result.history or {}) do
      if it.type == "compaction" then
        item = it
      end
    end
    if item and t:valid() then
      t:compaction(item, key)
    end
  end, function() end)
end

--- The service stopped: running turns are over, sessions must be re-attached.
function M.on_service_stop()
  M.release_switching()
  subagents.reset() -- its questions are gone with the service (a restarted kin sends them again)
  for sid, t in pairs(M.state.transcripts) do
    M.state.stale[sid] = true
    if t.running and t:valid() then
      t:turn_end({ status = "cancelled", error = "kin stopped" })
    end
    t.started_at = nil
  end
  status.refresh()
end

return M
