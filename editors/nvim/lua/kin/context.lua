-- The editor's context beside a question, as turn/start input parts (PROTOCOL.md "turn/start"):
-- the current file, a selection, a file's diagnostics, and the `@path` / `#buffer` mentions
-- typed in the question. Ranges are LSP's (zero-based lines, UTF-16 characters, end exclusive).
-- Parts waiting for the next question (:KinAttach) are kept here until kin accepts it.
local M = {}

---@class kin.ContextState
---@field attached table[]   parts for the next question
M.state = { attached = {} }

function M.reset()
  M.state = { attached = {} }
end

--- The first workspace folder kin works in (from initialize), else the current directory: what
--- paths of parts and mentions are relative to.
function M.workspace_root()
  local init = require("kin.service").ctx.init or {}
  local folders = init.workspaceFolders or {}
  return folders[1] or vim.uv.cwd()
end
local workspace_root = M.workspace_root

--- A buffer's path as kin takes it: relative to the first workspace folder when inside it.
function M.path(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return nil
  end
  local full = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  local root = vim.fs.normalize(workspace_root())
  if full:sub(1, #root + 1) == root .. "/" then
    return full:sub(#root + 2)
  end
  return full
end

-- A byte column of a buffer line as a UTF-16 character offset.
local function utf16(buf, row, col)
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  col = math.min(col, #line)
  local ok, _, units = pcall(vim.str_utfindex, line, col)
  return ok and units or col
end

--- The current file, whole (kin reads it as read_file would: from the buffer, unsaved changes
--- included), or its lines line1..line2 (1-based, inclusive).
function M.file(buf, line1, line2)
  local path = M.path(buf)
  if not path then
    return nil, "this buffer has no file"
  end
  local part = { type = "file", path = path }
  if line1 and line2 then
    local last = vim.api.nvim_buf_get_lines(buf, line2 - 1, line2, false)[1] or ""
    part.range = { start = { line = line1 - 1, character = 0 }, ["end"] = { line = line2 - 1, character = utf16(buf, line2 - 1, #last) } }
  end
  return part
end

--- What a buffer without a file holds, as a resource part named untitled:<name>.
function M.unnamed(buf, name)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  return { type = "resource", uri = "untitled:" .. name, mimeType = "text/plain", text = table.concat(lines, "\n") }
end

--- A selection: its text and where it is. Lines line1..line2 (1-based); with col1/col2 (0-based
--- bytes, col2 exclusive) a characterwise piece.
function M.selection(buf, line1, line2, col1, col2)
  local path = M.path(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  local start, stop
  if col1 and col2 then
    lines[#lines] = lines[#lines]:sub(1, col2)
    lines[1] = lines[1]:sub(col1 + 1)
    start = { line = line1 - 1, character = utf16(buf, line1 - 1, col1) }
    stop = { line = line2 - 1, character = utf16(buf, line2 - 1, col2) }
  else
    start = { line = line1 - 1, character = 0 }
    stop = { line = line2 - 1, character = utf16(buf, line2 - 1, #(lines[#lines] or "")) }
  end
  local text = table.concat(lines, "\n")
  if not path then
    -- A buffer without a file is sent as what it holds.
    return { type = "resource", uri = "untitled:" .. buf, mimeType = "text/plain", text = text }
  end
  return { type = "selection", path = path, range = { start = start, ["end"] = stop }, text = text }
end

local SEVERITY = { "error", "warning", "information", "hint" }

--- The diagnostics (problems) Neovim knows for a buffer, all of them or those on line1..line2.
function M.diagnostics(buf, line1, line2)
  local path = M.path(buf)
  if not path then
    return nil, "this buffer has no file"
  end
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if not line1 or (d.lnum + 1 >= line1 and d.lnum + 1 <= line2) then
      items[#items + 1] = {
        range = {
          start = { line = d.lnum, character = utf16(buf, d.lnum, d.col or 0) },
          ["end"] = { line = d.end_lnum or d.lnum, character = utf16(buf, d.end_lnum or d.lnum, d.end_col or d.col or 0) },
        },
        severity = SEVERITY[d.severity] or nil,
        message = d.message,
        source = d.source,
      }
    end
  end
  if #items == 0 then
    return nil, "no diagnostics for " .. path
  end
  return { type = "diagnostics", path = path, items = items }
end

local IMAGE_TYPES = { png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", gif = "image/gif", webp = "image/webp" }

--- An image file as a part (base64; kin takes PNG, JPEG, GIF and WebP, up to 5 MiB a question,
--- for a model that takes images).
function M.image(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local mime = IMAGE_TYPES[(full:match("%.([^./]+)$") or ""):lower()]
  if not mime then
    return nil, "not an image kin takes (png, jpg, gif, webp): " .. path
  end
  local f = io.open(full, "rb")
  if not f then
    return nil, "cannot read " .. path
  end
  local data = f:read("*a")
  f:close()
  return { type = "image", mimeType = mime, data = vim.base64.encode(data), name = vim.fs.basename(full), bytes = #data }
end

--- One line saying what a part attaches (the input's title bar, the transcript).
function M.describe(p)
  local where = p.path or p.uri or ""
  if p.range then
    local a, b = p.range.start.line + 1, p.range["end"].line + 1
    where = where .. (a == b and (" line " .. a) or (" lines " .. a .. "-" .. b))
  end
  if p.type == "diagnostics" then
    local n = p.items and #p.items
    return ("diagnostics of %s%s"):format(where, n and (" (" .. n .. ")") or "")
  elseif p.type == "image" then
    return "image " .. (p.name and (p.name .. " ") or "") .. (p.mimeType or "")
  end
  return ("%s %s"):format(p.type, where)
end

--- Adds a part for the next question.
function M.attach(part)
  table.insert(M.state.attached, part)
  pcall(vim.cmd, "redrawstatus!")
end

function M.clear()
  M.state.attached = {}
  pcall(vim.cmd, "redrawstatus!")
end

-- The loaded buffer named by a #mention: by its path (relative or not) or its file name.
local function mentioned_buffer(name)
  local found
  for _, b in ipairs(require("kin.complete").buffers()) do
    if b.name == name then
      return b.buf
    end
    if vim.fs.basename(b.name) == name then
      found = found or b.buf
    end
  end
  return found
end

--- The parts a question's `@path` and `#buffer` mentions attach (the text keeps them).
function M.mentions(text)
  local parts, seen = {}, {}
  local root = workspace_root()
  for kind, name in (" " .. text):gmatch("[%s%(]([@#])([^%s@#%),;]+)") do
    name = name:gsub("[.:]$", "")
    local key = kind .. name
    if not seen[key] then
      seen[key] = true
      if kind == "@" then
        local full = name:match("^/") and name or (root .. "/" .. name)
        if vim.fn.filereadable(full) == 1 then
          parts[#parts + 1] = { type = "file", path = name }
        else
          parts[#parts + 1] = require("kin.resources").part(name) -- @server:uri
        end
      else
        local b = mentioned_buffer(name)
        if b then
          parts[#parts + 1] = M.file(b) or M.unnamed(b, name)
        end
      end
    end
  end
  return parts
end

--- What turn/start gets for a question: the text alone when nothing is attached or mentioned,
--- else the parts (the question's text first).
function M.input(text)
  local parts = {}
  for _, p in ipairs(M.state.attached) do
    p = vim.deepcopy(p)
    -- What only the title bar shows (an image's file name and size) is not kin's.
    if p.type == "image" then
      p.name, p.bytes = nil, nil
    end
    parts[#parts + 1] = p
  end
  vim.list_extend(parts, M.mentions(text))
  if #parts == 0 then
    return text
  end
  table.insert(parts, 1, { type = "text", text = text })
  return parts
end

--- The same question as one text, for a kin that takes no parts: each part as a fenced block.
function M.as_text(input)
  if type(input) ~= "table" then
    return input
  end
  local blocks, question = {}, {}
  for _, p in ipairs(input) do
    if p.type == "text" then
      question[#question + 1] = p.text
    else
      local body = p.text
      if not body and p.type == "file" then
        local full = p.path:match("^/") and p.path or (workspace_root() .. "/" .. p.path)
        local buf = vim.fn.bufnr(full)
        local lines = buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_lines(buf, 0, -1, false)
          or (vim.fn.filereadable(full) == 1 and vim.fn.readfile(full) or {})
        if p.range then
          lines = vim.list_slice(lines, p.range.start.line + 1, p.range["end"].line + 1)
        end
        body = table.concat(lines, "\n")
      elseif not body and p.type == "diagnostics" then
        local l = {}
        for _, it in ipairs(p.items or {}) do
          l[#l + 1] = ("%d:%d %s: %s"):format(it.range.start.line + 1, it.range.start.character + 1, it.severity or "", it.message or "")
        end
        body = table.concat(l, "\n")
      end
      local longest = 2
      for run in (body or ""):gmatch("`+") do
        longest = math.max(longest, #run)
      end
      local fence = string.rep("`", longest + 1)
      blocks[#blocks + 1] = ("`%s`:\n%s\n%s\n%s"):format(M.describe(p), fence, body or "", fence)
    end
  end
  return table.concat(blocks, "\n\n") .. "\n\n" .. table.concat(question, "\n\n")
end

return M
