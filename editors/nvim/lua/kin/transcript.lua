-- One session's transcript: a read-only markdown buffer that grows at the end, except its blocks
-- (a tool call with its folded output, the plan, a reasoning summary), which are rewritten in
-- place as they change (tracked by extmarks).
local M = {}

local ns = vim.api.nvim_create_namespace("kin_transcript")
M.ns = ns
-- The "## You" line of each turn (where kin.tsregion may start parsing).
M.turn_ns = vim.api.nvim_create_namespace("kin_transcript_turns")

---@class kin.Transcript
---@field buf integer
---@field session_id string?
---@field tools table<string, table>   tool calls by callId (their block is "tool:" .. callId)
---@field blocks table<string, {mark: integer, n: integer, fold_after: integer?}> by key
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
  -- Read-only, so nothing to undo: Neovim would otherwise keep a copy of each line changed
  -- (the answer's growing last line, once per streamed piece).
  vim.bo[buf].undolevels = -1
  pcall(vim.api.nvim_buf_set_name, buf, buf_name(session_id))
  vim.bo[buf].filetype = "markdown"
  local tr = setmetatable({ buf = buf, session_id = session_id, tools = {}, blocks = {}, by_mark = {}, empty = true }, Transcript)
  M.by_buf[buf] = tr
  return tr
end

function Transcript:bind(session_id)
  self.session_id = session_id
  pcall(vim.api.nvim_buf_set_name, self.buf, buf_name(session_id))
end

function Transcript:valid()
  return vim.api.nvim_buf_is_valid(self.buf)
end

function Transcript:_edit(fn, keep_tail)
  if not self:valid() then
    return
  end
  if not keep_tail then
    self:flush() -- the streamed text held back comes first
    self.tail = nil -- another edit: where the streamed line ends is read again
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

--- s on one line: its line breaks become spaces.
function M.one_line(s)
  return (tostring(s):gsub("\r?\n", " "))
end

-- Text from the model, kin or a server may hold a line break anywhere (a plan step, a tool's
-- title, an error with the provider's body, a notice, a file name in a repository), and Neovim
-- refuses a buffer line with one ("'replacement string' item contains newlines"): the edit was
-- lost, and with it whatever the handler still had to do (a turn's end; the rest of a resumed
-- history). So every line is made whole here: the first `keep` lines (a block's heading, which
-- its fold leaves in view) stay one line each, the others become as many lines as they hold.
local function whole_lines(lines, keep)
  local out = {}
  for i, l in ipairs(lines) do
    if i <= keep then
      out[#out + 1] = M.one_line(l)
    elseif type(l) == "string" and not l:find("\n", 1, true) then
      out[#out + 1] = l -- most lines: no split (a streamed block passes all its lines each time)
    else
      vim.list_extend(out, vim.split(tostring(l), "\n", { plain = true }))
    end
  end
  return out
end

--- Appends whole lines at the end.
function Transcript:lines(lines)
  lines = whole_lines(lines, 0)
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
    vim.api.nvim_buf_clear_namespace(buf, M.turn_ns, 0, -1)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  self.empty = true
  self.tools = {}
  self.blocks = {}
  self.by_mark = {}
  self.last = nil
  self.reasoning_block, self.reasoning_n = nil, 0
end

--- A user turn and the header of the answer that follows.
function Transcript:user(text, parts)
  local lines = { "## You", "" }
  vim.list_extend(lines, vim.split(text or "", "\n", { plain = true }))
  if type(parts) == "table" and #parts > 0 then
    local ctx = require("kin.context")
    lines[#lines + 1] = ""
    for _, p in ipairs(parts) do
      lines[#lines + 1] = "> attached: " .. ctx.describe(p) .. (p.bytes and (" (" .. p.bytes .. " bytes)") or "")
    end
  end
  vim.list_extend(lines, { "", "## kin", "" })
  if not self.empty then
    table.insert(lines, 1, "")
  end
  self:flush() -- the row counted below is after any streamed text held back
  local row = self.empty and 0 or vim.api.nvim_buf_line_count(self.buf) + 1
  self:lines(lines)
  pcall(vim.api.nvim_buf_set_extmark, self.buf, M.turn_ns, row, 0, { right_gravity = false })
  self.last = "header"
end

--- Streams assistant text: continues the last line while text is being streamed.
function Transcript:text(text)
  if not text or text == "" then
    return
  end
  self.reasoning_open = false
  if self.last ~= "text" then
    if self.last and self.last ~= "header" then
      self:lines({ "" })
    end
    self:lines({ "" })
    self.last = "text"
  end
  if self.pending then
    self.pending[#self.pending + 1] = text
    return
  end
  if self.tail and self.tail.len >= M.LONG_LINE then
    -- Each piece written to a line this long copies the line in Neovim (its storage keeps a
    -- line whole): the pieces that come within M.LONG_LINE_MS are written together, then or
    -- before anything else reads or changes the transcript.
    self.pending = { text }
    vim.defer_fn(function()
      self:flush()
    end, M.LONG_LINE_MS)
    return
  end
  self:_append(text)
end

-- A streamed line longer than this (bytes) takes the pieces that come at once together.
M.LONG_LINE = 64 * 1024
M.LONG_LINE_MS = 20

--- Writes the streamed text held back (Transcript:text), if any.
function Transcript:flush()
  local pending = self.pending
  if pending then
    self.pending = nil
    self:_append(table.concat(pending))
  end
end

function Transcript:_append(text)
  -- The piece is inserted where the last line ends: only the piece goes to Neovim. Reading the
  -- last line and writing it back with the piece made a one-line stream of n pieces cost n
  -- times the line (80,000 pieces: 48 s). self.tail: the last line's row and length in bytes,
  -- as this wrote it (any other edit drops it, and the line is measured again).
  self:_edit(function(buf)
    local n = vim.api.nvim_buf_line_count(buf)
    local tail = self.tail
    if not (tail and tail.row == n - 1) then
      tail = { row = n - 1, len = #(vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or "") }
    end
    local parts = vim.split(text, "\n", { plain = true })
    vim.api.nvim_buf_set_text(buf, tail.row, tail.len, tail.row, tail.len, parts)
    if #parts == 1 then
      tail.len = tail.len + #parts[1]
    else
      tail = { row = tail.row + #parts - 1, len = #parts[#parts] }
    end
    self.tail = tail
  end, true)
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

local FINAL = { completed = true, failed = true, denied = true, unknown = true, output_limit = true }

--- How a command ended, from the last lines of its output ("exit status 1", "signal: killed",
--- "[killed after cancel; ...]"), or nil.
function M.exit_status(output)
  if type(output) ~= "string" then
    return nil
  end
  local found
  for line in output:gmatch("[^\n]+") do
    if line:match("^exit status %d+$") or line:match("^signal: ") or line:match("^%[killed") then
      found = line:gsub("^%[", ""):gsub(";.*$", ""):gsub("%]$", "")
    end
  end
  return found
end

-- The header of a call: the tool line, and how a command ended.
local function header(t)
  local line = M.tool_line(t.name, t.title, t.status)
  if t.status == "working" and t.status_message and t.status_message ~= "" then
    -- an MCP task: where it stands (the server's text, kept on one line)
    line = line .. ": " .. t.status_message:gsub("[\r\n]+", " ")
  end
  if FINAL[t.status] and t.kind == "execute" then
    local exit = M.exit_status(t.output)
    if exit then
      line = line .. " (" .. exit .. ")"
    end
  end
  return line
end

M.OUTPUT_PREFIX = "  │ "
M.MAX_OUTPUT_LINES = 2000

-- The folded block under a call: its output (streamed or final) and the diffs it made.
local function output_lines(t)
  local text = t.output
  if (text == nil or text == "") and t.stream ~= "" then
    text = t.stream
  end
  local out = {}
  local function add(s)
    for _, l in ipairs(vim.split(s, "\n", { plain = true })) do
      out[#out + 1] = M.OUTPUT_PREFIX .. l
    end
  end
  for _, c in ipairs(t.content or {}) do
    if c.type == "diff" and c.diff and c.diff.unified and c.diff.unified ~= "" then
      add((c.diff.unified:gsub("\n$", "")))
    end
  end
  if text and text ~= "" then
    add((text:gsub("\n$", "")))
  end
  if #out > M.MAX_OUTPUT_LINES then
    local more = #out - M.MAX_OUTPUT_LINES
    out = vim.list_slice(out, 1, M.MAX_OUTPUT_LINES)
    out[#out + 1] = M.OUTPUT_PREFIX .. ("[… %d more lines not shown]"):format(more)
  end
  return out
end

--- Adds a block of lines at the end, or rewrites it in place when it exists (key names it).
--- opts.fold_after: the lines after the first fold_after ones are one fold (closed).
---@return integer row of the block's first line (0-based)
function Transcript:block(key, lines, opts)
  opts = opts or {}
  lines = whole_lines(lines, math.max(1, opts.fold_after or 0))
  local b = self.blocks[key]
  local pos = b and vim.api.nvim_buf_get_extmark_by_id(self.buf, ns, b.mark, {})
  if not (pos and pos[1]) then
    if self.last == "text" then
      self:lines({ "" })
    end
    self:lines({ lines[1] or "" })
    local row = vim.api.nvim_buf_line_count(self.buf) - 1
    b = { mark = vim.api.nvim_buf_set_extmark(self.buf, ns, row, 0, { right_gravity = false }), n = 1 }
    self.blocks[key] = b
    self.by_mark[b.mark] = b
    self.last = opts.kind or "block"
    pos = { row }
  end
  local row = pos[1]
  -- The block's new extent is known before the edit: Neovim evaluates 'foldexpr' for the
  -- changed lines while they change, so a block drawn whole at once (from history, a
  -- compaction) is folded only if its extent (read by _folded) already counts it.
  local old_n, old = b.n, b.lines
  b.n = #lines
  b.lines = lines
  b.fold_after = opts.fold_after
  -- A streamed block (reasoning, a command's output, a subagent's answer under its call) grows
  -- at its end while a line or two above change (a heading's count or status, a subagent's
  -- summary): only the lines that changed are rewritten. Rewriting the whole block at each piece
  -- made a stream of n pieces cost n² (16,000 pieces of reasoning froze Neovim for over half a
  -- minute). edits: {first, last} old lines replaced by the new ones at the same places, each run
  -- of changed lines apart; when the number of lines changes, the last edit runs to the block's
  -- last old line, so the edit ends where the block ends.
  local edits = { { 1, old_n, #lines } }
  if old and #old == old_n then
    edits = {}
    local m = math.min(old_n, #lines)
    local i = 1
    while i < m do
      if old[i] ~= lines[i] then
        local j = i
        while j + 1 < m and old[j + 1] ~= lines[j + 1] do
          j = j + 1
        end
        edits[#edits + 1] = { i, j, j }
        i = j + 1
      else
        i = i + 1
      end
    end
    if old_n ~= #lines or old[m] ~= lines[m] then
      local a = m
      if #edits > 0 and edits[#edits][2] == m - 1 then
        a = table.remove(edits)[1]
      end
      edits[#edits + 1] = { a, old_n, #lines }
    end
  end
  -- from: the first line (1-based) whose row was part of a wider rewrite (its own marks were
  -- pulled to the rewrite's start); a heading replaced alone keeps its row and its marks.
  local from = #lines + 1
  for _, e in ipairs(edits) do
    if not (e[1] == 1 and e[2] == 1 and e[3] == 1) then
      from = math.min(from, e[1])
    end
  end
  self:_edit(function(buf)
    -- The text is replaced up to the end of an edit's last line, not up to the start of the
    -- line after it: for the block's last line that is where the next block's mark sits, and a
    -- replaced range ending there would pull that mark up to this block's first line (the next
    -- rewrite of that block would then overwrite this one). Bottom up: an edit that changes the
    -- number of lines is the last one, and moves none of the others.
    for k = #edits, 1, -1 do
      local a, z, nz = edits[k][1], edits[k][2], edits[k][3]
      local last = vim.api.nvim_buf_get_lines(buf, row + z - 1, row + z, true)[1]
      vim.api.nvim_buf_set_text(buf, row + a - 1, 0, row + z - 1, #last, vim.list_slice(lines, a, nz))
    end
    vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { id = b.mark, right_gravity = false })
  end)
  return row, from
end

-- Rewrites a call's header and output block in place.
-- A delegate call's subagent (kin.subagents sets t.subagent_lines): its summary line stays in
-- view under the call; its calls and answer fold with the call's output.
function Transcript:_draw_tool(t)
  local lines = { header(t) }
  local fold = 1
  if t.subagent_lines and #t.subagent_lines > 0 then
    vim.list_extend(lines, t.subagent_lines)
    fold = 2
  end
  vim.list_extend(lines, output_lines(t))
  self:block("tool:" .. t.id, lines, { fold_after = fold, kind = "tool" })
end

--- Adds a tool call (its line and, folded under it, its output) or updates it in place as its
--- status changes and its output streams (`outputDelta`, then the final `output`).
---@param p table turn/toolCall params or a toolCall history item
function Transcript:tool(p)
  local id = p.callId or ("call" .. vim.api.nvim_buf_line_count(self.buf))
  local t = self.tools[id]
  if not t then
    t = { id = id, stream = "" }
    self.tools[id] = t
  end
  t.name = p.name or t.name
  t.title = p.title or t.title
  t.status = p.status or t.status
  if p.statusMessage ~= nil then
    t.status_message = p.statusMessage
  end
  t.kind = p.kind or t.kind
  if p.outputDelta and p.outputDelta ~= "" then
    t.stream = t.stream .. p.outputDelta
  end
  if p.output ~= nil then
    t.output = p.output
  end
  if p.content ~= nil then
    t.content = p.content
  end
  self:_draw_tool(t)
end

M.REASONING_PREFIX = "  ┊ "

--- The model's reasoning summary, streamed: one folded block per stretch of reasoning (the next
--- answer text or call ends it), dimmed.
function Transcript:reasoning(text)
  if not text or text == "" then
    return
  end
  if self.last ~= "reasoning" or not self.reasoning_block then
    self.reasoning_n = (self.reasoning_n or 0) + 1
    self.reasoning_block = { key = "reasoning:" .. self.reasoning_n, parts = { "" }, shown = {}, dim = {} }
  end
  local r = self.reasoning_block
  -- The text's lines, kept piece by piece (the last one grows): re-splitting all of it at each
  -- piece made a long stream quadratic. shown: the body's lines as drawn, with their prefix.
  local parts = r.parts
  local tail = table.remove(parts)
  local first = #parts + 1
  vim.list_extend(parts, vim.split(tail .. text, "\n", { plain = true }))
  local n = #parts
  while n > 1 and parts[n] == "" do -- trailing line breaks are not drawn
    n = n - 1
  end
  for i = #r.shown, n + 1, -1 do
    r.shown[i] = nil
  end
  for i = math.min(first, #r.shown + 1), n do
    r.shown[i] = M.REASONING_PREFIX .. parts[i]
  end
  local lines = { ("_reasoning_ (%d line%s)"):format(n, n == 1 and "" or "s") }
  vim.list_extend(lines, r.shown)
  local row, from = self:block(r.key, lines, { fold_after = 1, kind = "reasoning" })
  -- One highlight per line of the block; the lines the block rewrote get theirs again (their
  -- old ones were pulled to the rewrite's start), the others keep theirs.
  local keep = from - 1
  for i = #r.dim, keep + 1, -1 do
    pcall(vim.api.nvim_buf_del_extmark, self.buf, M.dim_ns, r.dim[i])
    r.dim[i] = nil
  end
  for i = keep, #lines - 1 do
    local ok, id = pcall(vim.api.nvim_buf_set_extmark, self.buf, M.dim_ns, row + i, 0, { line_hl_group = "KinReasoning" })
    if ok then
      r.dim[i + 1] = id
    end
  end
  self.reasoning_open = true
end

M.dim_ns = vim.api.nvim_create_namespace("kin_transcript_dim")
vim.api.nvim_set_hl(0, "KinReasoning", { link = "Comment", default = true })

--- A compaction kin made: why, and the summary the model goes on from, folded.
--- With key, the block is drawn (or redrawn) under that key: kin's notice first, where it
--- arrived, then the summary in its place once it is read (item.notice: the notice's params).
function Transcript:compaction(item, key)
  local lines
  if item.notice then
    lines = { ("> **%s:** %s"):format(item.notice.level or "info", item.notice.message or "") }
  else
    lines = { ("[compacted: %s] the model goes on from this summary and the recent turns"):format(item.reason or "?") }
    for _, l in ipairs(vim.split((item.text or ""):gsub("\n$", ""), "\n", { plain = true })) do
      lines[#lines + 1] = M.OUTPUT_PREFIX .. l
    end
  end
  self:block(key or ("compaction:" .. vim.api.nvim_buf_line_count(self.buf)), lines, { fold_after = 1, kind = "meta" })
end

--- The project instructions in force (AGENTS.md files), one line.
function Transcript:instructions(files, changed)
  if type(files) ~= "table" or #files == 0 then
    return
  end
  local names = {}
  for _, f in ipairs(files) do
    names[#names + 1] = ("%s (%d bytes%s)"):format(vim.fn.fnamemodify(f.path or "?", ":~:."), f.bytes or 0, f.truncated and ", cut" or "")
  end
  local line = "[instructions] " .. table.concat(names, ", ")
  if type(changed) == "table" and #changed > 0 then
    line = line .. "; changed: " .. table.concat(changed, ", ")
  end
  self:meta(line)
end

local PLAN_MARKS = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

--- The plan as a checklist: one block per turn, rewritten in place at each update_plan.
function M.plan_lines(entries)
  local lines = { "**Plan**" }
  for _, e in ipairs(entries or {}) do
    local line = ("- %s %s"):format(PLAN_MARKS[e.status] or "[ ]", M.one_line(e.content or "")) -- a step is one line
    if e.priority and e.priority ~= "" then
      line = line .. " (" .. e.priority .. ")"
    end
    lines[#lines + 1] = line
  end
  if #lines == 1 then
    lines[2] = "- (no steps)"
  end
  return lines
end

function Transcript:plan(p)
  self:block("plan:" .. tostring(p.turnId or "?"), M.plan_lines(p.entries), { kind = "meta" })
end

--- What a turn/undo did, with each conflict's diff folded under it. An undo kin was stopped in
--- (error) says it is unfinished: which files went back is not known.
function M.undo_lines(u)
  local lines
  if type(u.error) == "string" and u.error ~= "" then
    lines = { ("[undo] turn %s: unfinished"):format(u.turnId or "?"), M.OUTPUT_PREFIX .. u.error }
  else
    lines = { ("[undo] turn %s: restored %d file%s"):format(u.turnId or "?", #(u.restored or {}), #(u.restored or {}) == 1 and "" or "s") }
  end
  for _, f in ipairs(u.restored or {}) do
    lines[#lines + 1] = M.OUTPUT_PREFIX .. "restored " .. f
  end
  for _, c in ipairs(u.conflicts or {}) do
    lines[#lines + 1] = M.OUTPUT_PREFIX .. ("left as it is: %s (%s)"):format(c.path or "?", c.reason or "")
    for _, l in ipairs(vim.split((c.diff or ""):gsub("\n$", ""), "\n", { plain = true })) do
      if l ~= "" then
        lines[#lines + 1] = M.OUTPUT_PREFIX .. "  " .. l
      end
    end
  end
  for _, n in ipairs(u.notUndoable or {}) do
    lines[#lines + 1] = M.OUTPUT_PREFIX .. ("not undone: %s %s (%s)"):format(n.name or "?", n.title or "", n.reason or "")
  end
  return lines
end

function Transcript:undo(u, key)
  -- An unfinished one shows why, unfolded.
  local unfinished = type(u.error) == "string" and u.error ~= ""
  self:block("undo:" .. (key or tostring(u.turnId)) .. ":" .. vim.api.nvim_buf_line_count(self.buf), M.undo_lines(u), { fold_after = unfinished and 2 or 1, kind = "meta" })
end

--- A /command kin ran: its text for a person, folded under its name.
function Transcript:command(input, c)
  local lines = { ("[/%s]%s"):format(c.name or "?", c.inserted and (" → " .. c.inserted:gsub("\n", " ")) or "") }
  for _, l in ipairs(vim.split((c.text or ""):gsub("\n$", ""), "\n", { plain = true })) do
    lines[#lines + 1] = M.OUTPUT_PREFIX .. l
  end
  self:block("command:" .. vim.api.nvim_buf_line_count(self.buf), lines, { fold_after = #lines > 4 and 1 or nil, kind = "meta" })
end

-- Whether row lnum (1-based) is in the folded part of a block (a call's output): the block is the
-- one whose mark is the last at or above the row, found in the marks' tree. All the folded rows
-- of the transcript used to be listed again at each change of the buffer (for the first row
-- Neovim asked about after it): each streamed piece then cost the whole session's output, so a
-- long session (hundreds of calls) made every piece of an answer take tens of milliseconds.
function Transcript:_folded(lnum)
  local m = vim.api.nvim_buf_get_extmarks(self.buf, ns, { lnum - 1, 0 }, 0, { limit = 1 })[1]
  local b = m and self.by_mark[m[1]]
  return b ~= nil and b.fold_after ~= nil and lnum >= m[2] + 1 + b.fold_after and lnum <= m[2] + b.n
end

M.by_buf = setmetatable({}, { __mode = "v" })

--- 'foldexpr' of transcript windows: a call's output is one fold.
function M.foldexpr(lnum)
  local tr = M.by_buf[vim.api.nvim_get_current_buf()]
  if tr and tr:_folded(lnum) then
    return 1
  end
  return 0
end

--- 'foldtext' of transcript windows.
function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  return ("%s▸ %d line%s of output (zo shows, zc hides)"):format(M.OUTPUT_PREFIX, n, n == 1 and "" or "s")
end

--- Window options that fold a transcript's tool output (closed until opened).
function M.fold_window(win)
  local wo = vim.wo[win]
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'kin.transcript'.foldexpr(v:lnum)"
  wo.foldtext = "v:lua.require'kin.transcript'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.foldminlines = 0
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
  self:flush() -- the answer is whole when its turn ends
  local status = p.status or "completed"
  local line
  if status == "failed" then
    line = "**Error:** " .. (p.error or "the turn failed")
  elseif status == "cancelled" then
    line = "_(cancelled" .. (p.error and (": " .. p.error) or "") .. ")_"
  elseif status == "limit" then
    line = "_(stopped at the tool call limit" .. (p.error and (": " .. p.error) or "") .. ")_"
  elseif status == "refused" then
    line = "_(the model refused to answer)_"
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
  self:flush()
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

--- Redraws a session/resume history.
function Transcript:history(items)
  self:clear()
  local prev
  for _, item in ipairs(items or {}) do
    if require("kin.branching").history_item(self, item) then
      -- steer, rollback, fork
    elseif item.type == "user" then
      self:user(item.text, item.parts)
      if item.rolledBack then
        self:meta("[taken back by a rollback: the model no longer sees this turn]")
      end
    elseif item.type == "assistant" then
      -- Two messages of one answer are two items: a paragraph apart, as they streamed.
      self:text((prev and prev.type == "assistant" and "\n\n" or "") .. item.text)
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
        require("kin.elicitation").asker(item),
        item.title or "",
        item.decision or "",
        item.reason and item.reason ~= "person" and (" (" .. item.reason .. ")") or ""
      ))
    elseif item.type == "turn" then
      self:turn_end(item)
      -- The gauge after a resume: how full the window was at the last turn's end.
      if type(item.usage) == "table" and tonumber(item.usage.contextWindow) then
        self.usage = item.usage
      end
    elseif item.type == "plan" then
      self:plan(item)
    elseif item.type == "reasoning" then
      self.last = nil
      self:reasoning(item.text)
      self.reasoning_open = false
    elseif item.type == "compaction" then
      self:compaction(item)
    elseif item.type == "instructions" then
      self:instructions(item.files, item.changed)
    elseif item.type == "configure" then
      self:meta(("[model] %s%s"):format(tostring(item.model or "?"), item.effort and (" (" .. item.effort .. ")") or ""))
    elseif item.type == "mode" then
      self:meta("[mode] " .. (item.mode or ""))
    elseif item.type == "undo" and item.undo then
      self:undo(item.undo)
    end
    prev = item
  end
end

M.Transcript = Transcript
return M
