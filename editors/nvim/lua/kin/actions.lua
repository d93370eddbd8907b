-- What a person does with what kin wrote, from the transcript: yank a code block or put it at
-- the cursor of the window they work in, jump to a file path or location kin mentioned, move
-- between turns.
local M = {}

--- The fenced code block around row (1-based) of buf: its lines (without the fences), the
--- language, and its first and last rows; nil when row is not inside one.
function M.code_block(buf, row)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local open, fence, lang
  for i = 1, #lines do
    local l = lines[i]
    if not open then
      local f, info = l:match("^%s*(```+)%s*([%w_+%-.]*)")
      if not f then
        f, info = l:match("^%s*(~~~+)%s*([%w_+%-.]*)")
      end
      if f then
        open, fence, lang = i, f, info
      end
    elseif l:match("^%s*" .. vim.pesc(fence:sub(1, 1)) .. "+%s*$") and #l:match("[`~]+") >= #fence then
      if row >= open and row <= i then
        return { lines = vim.list_slice(lines, open + 1, i - 1), lang = lang ~= "" and lang or nil, first = open, last = i }
      end
      open = nil
    end
  end
end

-- The window the person works in: the last one that is not kin's.
local function work_window()
  local chat = require("kin.chat").state
  local panel = require("kin.panel").state
  local skip = { [chat.win or -1] = true, [chat.input_win or -1] = true, [panel.body_win or -1] = true, [panel.choices_win or -1] = true }
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and not skip[prev] and vim.api.nvim_win_get_config(prev).relative == "" then
    return prev
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if not skip[w] and vim.api.nvim_win_get_config(w).relative == "" then
      return w
    end
  end
end

local function notify(msg, level)
  require("kin.service").notify(msg, level)
end

-- The code block under the cursor, or nil (and the person told).
local function block_at_cursor()
  local block = M.code_block(vim.api.nvim_get_current_buf(), vim.api.nvim_win_get_cursor(0)[1])
  if not block then
    notify("the cursor is not in a code block")
  end
  return block
end

--- Yanks the code block under the cursor (into the unnamed register and, when there is one,
--- the clipboard).
function M.yank_code()
  local block = block_at_cursor()
  if not block then
    return
  end
  vim.fn.setreg('"', block.lines, "l")
  pcall(vim.fn.setreg, "+", block.lines, "l")
  notify(("yanked %d line%s"):format(#block.lines, #block.lines == 1 and "" or "s"))
  return block
end

--- Puts the code block under the cursor below the cursor line of the window the person works
--- in (one undo step there), and goes there.
function M.put_code()
  local block = block_at_cursor()
  if not block then
    return
  end
  local win = work_window()
  if not win then
    return notify("no window to put the code in", vim.log.levels.WARN)
  end
  local buf = vim.api.nvim_win_get_buf(win)
  if not vim.bo[buf].modifiable then
    return notify("that buffer cannot be changed", vim.log.levels.WARN)
  end
  local at = vim.api.nvim_win_get_cursor(win)[1]
  vim.api.nvim_buf_set_lines(buf, at, at, false, block.lines)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { at + 1, 0 })
  return block
end

--- A file location in text: path, line and column ("main.go:12:3", "main.go#L12", "`main.go`").
function M.location_at(line, col)
  -- The word under the cursor, of characters a path can have.
  local s, e = col + 1, col + 1
  local pat = "[%w_%./~%-:#@+]"
  if not line:sub(s, s):match(pat) then
    return nil
  end
  while s > 1 and line:sub(s - 1, s - 1):match(pat) do
    s = s - 1
  end
  while e < #line and line:sub(e + 1, e + 1):match(pat) do
    e = e + 1
  end
  local word = line:sub(s, e):gsub("^[:#@]+", ""):gsub("[:#.]+$", "")
  local path, lnum, cnum = word:match("^(.-):(%d+):(%d+)$")
  if not path then
    path, lnum = word:match("^(.-):(%d+)$")
  end
  if not path then
    path, lnum = word:match("^(.-)#L(%d+)$")
  end
  if not path then
    path = word
  end
  return { path = path, line = tonumber(lnum), col = tonumber(cnum) }
end

local function resolve(path)
  if path == "" then
    return nil
  end
  local candidates = { path }
  if not path:match("^/") and not path:match("^~") then
    local init = require("kin.service").ctx.init or {}
    for _, f in ipairs(init.workspaceFolders or {}) do
      table.insert(candidates, 1, f .. "/" .. path)
    end
    candidates[#candidates + 1] = vim.uv.cwd() .. "/" .. path
  end
  for _, c in ipairs(candidates) do
    local full = vim.fs.normalize(vim.fn.expand(c))
    if vim.fn.filereadable(full) == 1 then
      return full
    end
  end
end

--- Opens the file (and line) under the cursor in the window the person works in.
function M.open_location()
  local line = vim.api.nvim_get_current_line()
  local loc = M.location_at(line, vim.api.nvim_win_get_cursor(0)[2])
  local file = loc and resolve(loc.path)
  if not file then
    return notify("no file under the cursor" .. (loc and loc.path ~= "" and (": " .. loc.path) or ""))
  end
  local win = work_window()
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd("wincmd p")
  end
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  if loc.line then
    local last = vim.api.nvim_buf_line_count(0)
    pcall(vim.api.nvim_win_set_cursor, 0, { math.min(loc.line, last), math.max(0, (loc.col or 1) - 1) })
  end
  return file, loc
end

--- Moves to the next (1) or previous (-1) question of the transcript.
function M.jump_turn(dir)
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local i = row + dir
  while i >= 1 and i <= #lines do
    if lines[i] == "## You" then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      return i
    end
    i = i + dir
  end
end

return M
