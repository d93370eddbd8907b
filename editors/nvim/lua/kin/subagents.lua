-- Subagents (PROTOCOL.md, Subagents). A subagent's notifications and questions carry its own
-- sessionId plus parentSessionId, parentTurnId and parentCallId. Its questions are shown and
-- answered like its parent's, labelled "subagent: <task>"; its progress is drawn indented under
-- the parent's delegate call (a summary line, and its calls and answer folded with the call's
-- output), never as the parent's answer and never in a transcript of its own.
local M = {}

---@class kin.SubagentView
---@field sessionId string
---@field parent string          parentSessionId
---@field parentTurnId string?
---@field parentCallId string?
---@field task string
---@field status string          "running" until its turn/completed
---@field text string            its answer so far
---@field calls table[]          {callId, title, status}, in order
---@field latest string          one line: its latest activity
---@field waiting integer        its questions waiting for the person

---@type table<string, kin.SubagentView>
M.views = {}

function M.reset()
  M.views = {}
  M.open = {}
end

--- Whether a frame is a subagent's: it names a parent session other than its own.
function M.nested(p)
  return type(p) == "table" and type(p.parentSessionId) == "string" and p.parentSessionId ~= ""
    and p.sessionId ~= nil and p.sessionId ~= p.parentSessionId
end

local function short(s, n)
  s = tostring(s or ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  if vim.fn.strchars(s) > n then
    return vim.fn.strcharpart(s, 0, n) .. "…"
  end
  return s
end

--- The task a delegate call asked for: its arguments' `task`, else its title's words.
function M.task_of(args, title)
  local ok, a = pcall(vim.json.decode, args or "")
  if ok and type(a) == "table" and type(a.task) == "string" and a.task:match("%S") then
    return vim.trim(a.task)
  end
  return (tostring(title or ""):gsub("^Subagent %([^)]*%):%s*", ""))
end

local function view(sid, p)
  local v = M.views[sid]
  if not v then
    v = {
      sessionId = sid,
      parent = p.parentSessionId or "",
      parentTurnId = p.parentTurnId,
      parentCallId = p.parentCallId,
      task = "",
      status = "running",
      text = "",
      calls = {},
      latest = "",
      waiting = 0,
    }
    M.views[sid] = v
  end
  return v
end

--- The label of a subagent's question: "subagent: <task's first words>".
function M.label(sid)
  local v = sid and M.views[sid]
  if v and v.task ~= "" then
    return "subagent: " .. short(v.task, 60)
  end
  return "subagent"
end

--- The one-line summary shown under the delegate call, even folded.
function M.summary(v)
  local n = #v.calls
  local calls = n == 0 and "no calls yet" or ("%d call%s"):format(n, n == 1 and "" or "s")
  local s = ("subagent %s: %s"):format(v.status, calls)
  if v.latest ~= "" then
    s = s .. " · " .. v.latest
  end
  return s
end

local INDENT = "  "

--- The lines of a view: its summary, then its calls (each with its own subagent) and answer.
---@return string[]
function M.lines(v, depth)
  depth = depth or 1
  local pad = INDENT:rep(depth)
  local out = { pad .. "↳ " .. M.summary(v) }
  for _, c in ipairs(v.calls) do
    -- One line each: a buffer line cannot hold a newline (a title is the model's words).
    local title = tostring(c.title or ""):gsub("[\r\n]+", " ")
    out[#out + 1] = ("%s  - %s (%s)"):format(pad, title, (tostring(c.status):gsub("_", " ")))
    local inner = c.sessionId and M.views[c.sessionId]
    if inner and depth < 5 then
      vim.list_extend(out, M.lines(inner, depth + 1))
    end
  end
  if v.text ~= "" then
    for _, l in ipairs(vim.split((v.text:gsub("\n+$", "")), "\n", { plain = true })) do
      out[#out + 1] = pad .. "  ┊ " .. l
    end
  end
  return out
end

-- Redraws the delegate call that shows v (up the chain of subagents to the session's transcript).
local function redraw(v)
  local chat = require("kin.chat")
  local seen = {}
  while v and not seen[v.sessionId] do
    seen[v.sessionId] = true
    local t = chat.state.transcripts[v.parent]
    if t then
      local call = v.parentCallId and t.tools[v.parentCallId]
      if call and t:valid() then
        call.subagent_lines = M.lines(v)
        t:_draw_tool(call)
      end
      return
    end
    v = M.views[v.parent]
  end
end

--- A subagent's frame (method: "turn/started", "turn/delta", "turn/toolCall", "turn/completed",
--- "turn/reasoning", "turn/usage", "turn/plan", "notice"). Returns true when it was one (the
--- caller then leaves it alone).
function M.take(method, p)
  if not M.nested(p) then
    return false
  end
  local v = view(p.sessionId, p)
  if method == "turn/started" then
    v.task = v.task ~= "" and v.task or (type(p.input) == "string" and p.input or "")
    v.status, v.latest = "running", "started"
  elseif method == "turn/delta" then
    if v.after_call and v.text ~= "" and not v.text:find("\n$") then
      v.text = v.text .. "\n" -- text after a call is a new message, as in the chat
    end
    v.after_call = false
    v.text = v.text .. (p.text or "")
    -- Its last line, looked for near the end: ([^\n]*)$ over the whole answer tried every
    -- position of it at each piece (a 1,000-line answer streamed in 8,000 pieces took half a
    -- minute). A line longer than the tail shows its end.
    local tail = vim.trim(v.text:sub(-4096))
    local last = tail:match(".*\n(.*)$") or tail
    if last ~= "" then
      v.latest = short(last, 100)
    end
  elseif method == "turn/toolCall" then
    local c
    for _, x in ipairs(v.calls) do
      if x.callId == p.callId then
        c = x
      end
    end
    if not c then
      c = { callId = p.callId, title = p.title or p.name or "tool" }
      v.calls[#v.calls + 1] = c
    end
    c.title = (p.title and p.title ~= "") and p.title or c.title
    c.status = p.status or c.status
    v.after_call = true
    v.latest = short(("%s: %s"):format(c.title, (tostring(c.status):gsub("_", " "))), 100)
    if type(p.subagent) == "table" and p.subagent.sessionId then
      -- The subagent's own delegate call: its subagent nests under this call.
      c.sessionId = p.subagent.sessionId
      local inner = view(p.subagent.sessionId, { parentSessionId = p.sessionId, parentTurnId = p.turnId, parentCallId = p.callId })
      if inner.task == "" then
        inner.task = M.task_of(p.arguments, p.title)
      end
    end
  elseif method == "turn/completed" then
    v.status, v.waiting = p.status or "completed", 0
    v.latest = v.status == "completed" and "done" or (v.status .. (p.error and (": " .. short(p.error, 80)) or ""))
  elseif method == "notice" then
    v.latest = short(p.message, 100)
  else
    -- Its reasoning, usage (the parent's turn/usage already counts it) and plan: not shown.
    return true
  end
  redraw(v)
  return true
end

local FINAL = { completed = true, failed = true, denied = true, unknown = true, output_limit = true }

--- The parent's delegate call names its subagent's session: follow it and draw it under the call.
--- Before that, while it waits for a free slot (subagents.maxRunning), the call says so.
function M.on_delegate(p)
  if type(p) ~= "table" or type(p.subagent) ~= "table" or M.nested(p) then
    return
  end
  if not p.subagent.sessionId then
    local t = require("kin.chat").state.transcripts[p.sessionId]
    local call = t and p.callId and t.tools[p.callId]
    if call and t:valid() then
      local waiting = p.subagent.waiting and not FINAL[p.status]
      call.subagent_lines = waiting and { "  ↳ subagent waiting for a free slot (subagents.maxRunning)" } or nil
      t:_draw_tool(call)
    end
    return
  end
  local v = view(p.subagent.sessionId, { parentSessionId = p.sessionId, parentTurnId = p.turnId, parentCallId = p.callId })
  if v.task == "" then
    v.task = M.task_of(p.arguments, p.title)
  end
  if FINAL[p.status] and v.status == "running" then
    v.status = p.status == "completed" and "completed" or "failed"
  end
  redraw(v)
end

--- A resumed session's history: its delegate calls' subagents are followed (a question of one
--- still running is named by its task). A finished one with nothing seen here draws nothing: the
--- call's line and output say enough.
function M.on_history(sid, items)
  for _, it in ipairs(items or {}) do
    if it.type == "toolCall" and type(it.subagent) == "table" and it.subagent.sessionId then
      local p = vim.tbl_extend("force", it, { sessionId = sid })
      local v = M.views[it.subagent.sessionId]
      if FINAL[it.status] and not (v and (#v.calls > 0 or v.text ~= "")) then
        v = view(it.subagent.sessionId, { parentSessionId = sid, parentTurnId = it.turnId, parentCallId = it.callId })
        if v.task == "" then
          v.task = M.task_of(it.arguments, it.title)
        end
        v.status = it.status == "completed" and "completed" or "failed"
      else
        M.on_delegate(p)
      end
    end
  end
end

-- The subagents' questions waiting for the person: requestId -> the subagent's sessionId.
M.open = {}

--- A subagent's question came (approval/request, elicitation/request; a re-sent one counts once).
function M.asked(p)
  if not M.nested(p) or not p.requestId or M.open[p.requestId] then
    return
  end
  M.open[p.requestId] = p.sessionId
  local v = view(p.sessionId, p)
  v.waiting = (v.waiting or 0) + 1
  v.latest = "waiting for your answer"
  for _, c in ipairs(v.calls) do
    if c.callId == p.callId and c.status == "pending" then
      c.status = "awaiting_approval"
    end
  end
  redraw(v)
end

--- A question was resolved: one of a subagent's no longer waits.
function M.resolved(p)
  local sid = type(p) == "table" and p.requestId and M.open[p.requestId]
  if not sid then
    return
  end
  M.open[p.requestId] = nil
  local v = M.views[sid]
  if v then
    v.waiting = math.max(0, (v.waiting or 0) - 1)
    redraw(v)
  end
end

--- The prefix of a question's title: "[subagent: <task>] " for a subagent's, else "".
function M.prefix(p)
  if not M.nested(p) then
    return ""
  end
  return "[" .. M.label(p.sessionId) .. "] "
end

--- session/list's rows (asked with includeSubagents) in picker order: each subagent's session
--- right after its parent's, with depth set one deeper; one whose parent is not listed comes
--- last, one deep. The rows are copies (depth added); the list given is not changed.
function M.nest(sessions)
  local ids, children = {}, {}
  for _, s in ipairs(sessions) do
    ids[s.sessionId] = true
  end
  for _, s in ipairs(sessions) do
    local pid = s.parentId
    if pid and ids[pid] and pid ~= s.sessionId then
      children[pid] = children[pid] or {}
      table.insert(children[pid], s)
    end
  end
  local out, seen = {}, {}
  local function walk(s, depth)
    if seen[s.sessionId] then
      return
    end
    seen[s.sessionId] = true
    out[#out + 1] = vim.tbl_extend("force", s, { depth = depth })
    for _, c in ipairs(children[s.sessionId] or {}) do
      walk(c, depth + 1)
    end
  end
  for _, s in ipairs(sessions) do
    if not s.parentId then
      walk(s, 0)
    end
  end
  for _, s in ipairs(sessions) do
    walk(s, 1)
  end
  return out
end

return M
