-- One session's transcript: a read-only markdown buffer that only ever grows at the end, except
-- tool-call lines, which are rewritten in place as their status changes (tracked by extmarks).
local M = {}

local ns = vim.api.nvim_create_namespace("kin_transcript")
M.ns = ns

---@class kin.Transcript
---@field buf integer
---@field session_id string?
---@field tools table<string, {mark: integer, name: string, title: string?, status: string}>
---@field last string?   what the last written block was: "header", "text", "tool", "meta", "end"
---@field running boolean a turn is running
local Transcript = {}
Transcript.__index = Transcript

local function buf_name(session_id)
  return "kin://chat/" .. (session_id or "new")
end

---@return kin.Transcript
function M.new(session_id)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, buf_name(session_id))
  vim.bo[buf].filetype = "markdown"
  return setmetatable({ buf = buf, session_id = session_id, tools = {}, empty = true }, Transcript)
end

function Transcript:bind(session_id)
  self.session_id = session_id
  pcall(vim.api.nvim_buf_set_name, self.buf, buf_name(session_id))
end

function Transcript:valid()
  return vim.api.nvim_buf_is_valid(self.buf)
end

function Transcript:_edit(fn)
  if not self:valid() then
    return
  end
  local buf = self.buf
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  -- Follow the end in windows that are not being read elsewhere.
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if win ~= vim.api.nvim_get_current_win() then
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
  if not ok then
    error(err)
  end
end

--- Appends whole lines at the end.
function Transcript:lines(lines)
  self:_edit(function(buf)
    if self.empty then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      self.empty = false
    else
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
  end)
end

--- Clears the buffer (before redrawing a resumed session).
function Transcript:clear()
  self:_edit(function(buf)
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  self.empty = true
  self.tools = {}
  self.last = nil
end

--- A user turn and the header of the answer that follows.
function Transcript:user(text)
  local lines = { "## You", "" }
  vim.list_extend(lines, vim.split(text or "", "\n", { plain = true }))
  vim.list_extend(lines, { "", "## kin", "" })
  if not self.empty then
    table.insert(lines, 1, "")
  end
  self:lines(lines)
  self.last = "header"
end

--- Streams assistant text: continues the last line while text is being streamed.
function Transcript:text(text)
  if not text or text == "" then
    return
  end
  if self.last ~= "text" then
    if self.last == "tool" or self.last == "meta" then
      self:lines({ "" })
    end
    self:lines({ "" })
    self.last = "text"
  end
  self:_edit(function(buf)
    local n = vim.api.nvim_buf_line_count(buf)
    local tail = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ""
    local parts = vim.split(tail .. text, "\n", { plain = true })
    vim.api.nvim_buf_set_lines(buf, n - 1, n, false, parts)
  end)
end

local function status_label(status)
  local label = (status or "pending"):gsub("_", " ")
  return label
end

function M.tool_line(name, title, status)
  local label = name or "tool"
  if title and title ~= "" then
    label = label .. ": " .. title
  end
  return ("[tool] %s — %s"):format(label, status_label(status))
end

--- Adds a tool-call line or rewrites it in place with its new status.
---@param p table turn/toolCall params or a toolCall history item
function Transcript:tool(p)
  local t = self.tools[p.callId]
  if t then
    t.name = p.name or t.name
    t.title = p.title or t.title
    t.status = p.status or t.status
    local pos = vim.api.nvim_buf_get_extmark_by_id(self.buf, ns, t.mark, {})
    if pos and pos[1] then
      local row = pos[1]
      self:_edit(function(buf)
        local old = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
        vim.api.nvim_buf_set_text(buf, row, 0, row, #old, { M.tool_line(t.name, t.title, t.status) })
        vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { id = t.mark, right_gravity = false })
      end)
    end
    return
  end
  if self.last == "text" then
    self:lines({ "" })
  end
  self:lines({ M.tool_line(p.name, p.title, p.status) })
  local row = vim.api.nvim_buf_line_count(self.buf) - 1
  local mark = vim.api.nvim_buf_set_extmark(self.buf, ns, row, 0, { right_gravity = false })
  self.tools[p.callId or tostring(row)] = { mark = mark, name = p.name, title = p.title, status = p.status }
  self.last = "tool"
end

--- A line about something that happened (an approval decision, a notice).
function Transcript:meta(text)
  if self.last == "text" then
    self:lines({ "" })
  end
  self:lines(vim.split(text, "\n", { plain = true }))
  self.last = "meta"
end

--- How a turn ended.
function Transcript:turn_end(p)
  local status = p.status or "completed"
  local line
  if status == "failed" then
    line = "**Error:** " .. (p.error or "the turn failed")
  elseif status == "cancelled" then
    line = "_(cancelled" .. (p.error and (": " .. p.error) or "") .. ")_"
  elseif status == "limit" then
    line = "_(stopped: too many tool calls in one turn)_"
  elseif p.error then
    line = "**Error:** " .. p.error
  end
  if line then
    self:lines({ "", line })
    self.last = "meta"
  end
  self.last = "end"
  self.running = false
end

--- The whole text of the buffer (tests and :KinChat users read it).
function Transcript:text_content()
  if not self:valid() then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

--- Redraws a session/resume history.
function Transcript:history(items)
  self:clear()
  for _, item in ipairs(items or {}) do
    if item.type == "user" then
      self:user(item.text)
    elseif item.type == "assistant" then
      self:text(item.text)
    elseif item.type == "toolCall" then
      self:tool(item)
    elseif item.type == "decision" then
      self:meta(("[approval] %s — %s%s"):format(
        item.title or (item.approved and item.approved.title) or item.approvalKind or "",
        (item.decision or ""):gsub("_", " "),
        item.reason and item.reason ~= "person" and (" (" .. item.reason .. ")") or ""
      ))
    elseif item.type == "elicitation" then
      self:meta(("[%s asked] %s — %s%s"):format(
        item.source == "kin" and "kin" or item.server or "mcp",
        item.title or "",
        item.decision or "",
        item.reason and item.reason ~= "person" and (" (" .. item.reason .. ")") or ""
      ))
    elseif item.type == "turn" then
      self:turn_end(item)
    elseif item.type == "reasoning" then
      self:meta("[thinking] " .. (item.text or ""))
    elseif item.type == "compaction" then
      self:meta(("[earlier conversation summarised (%s)] %s"):format(item.reason or "", item.text or ""))
    elseif item.type == "instructions" then
      self:meta("[project instructions changed] " .. table.concat(item.changed or {}, ", "))
    elseif item.type == "configure" then
      self:meta("[model] " .. (item.model or "") .. (item.effort and (" (effort " .. item.effort .. ")") or ""))
    elseif item.type == "plan" then
      local marks = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }
      local lines = {}
      for _, e in ipairs(item.entries or {}) do
        lines[#lines + 1] = (marks[e.status] or "[ ]") .. " " .. (e.content or "")
      end
      self:meta("[plan] " .. table.concat(lines, "; "))
    elseif item.type == "mode" then
      self:meta("[mode] " .. (item.mode or ""))
    elseif item.type == "undo" and item.undo then
      self:meta(("[undo] turn %s: restored %d file(s)%s"):format(
        item.undo.turnId or "",
        #(item.undo.restored or {}),
        item.undo.conflicts and #item.undo.conflicts > 0 and (", " .. #item.undo.conflicts .. " changed since left as they are") or ""
      ))
    end
  end
end

M.Transcript = Transcript
return M
