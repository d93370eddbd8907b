-- Completion in the chat's input buffer ('omnifunc', and opened by itself as the trigger
-- characters are typed): `/name` from kin's commands/list (kin's own commands and the MCP
-- servers' prompts, refreshed on commands/changed), `@path` for a file of the workspace and
-- `#name` for a loaded buffer (sent as input parts, see kin.mentions).
local service = require("kin.service")

local M = {}

---@class kin.CompleteState
---@field commands table[]?   commands/list's rows, nil until fetched (or after commands/changed)
---@field for_session string?
---@field fetching boolean
M.state = { fetching = false }

function M.reset()
  M.state = { fetching = false }
end

--- Fetches commands/list (for the session questions go to); cb(commands) when it came.
function M.fetch(session_id, cb)
  local st = M.state
  st.fetching = true
  service.request("commands/list", session_id and { sessionId = session_id } or {}, function(r)
    st.fetching = false
    st.commands = r and r.commands or {}
    st.for_session = session_id
    if cb then
      cb(st.commands)
    end
  end, function(err)
    st.fetching = false
    if err.code ~= -32601 then
      service.notify("commands/list failed: " .. tostring(err.message), vim.log.levels.WARN)
    end
    st.commands = st.commands or {}
  end)
end

--- commands/changed: fetch again (now, so the next completion has them).
function M.on_changed()
  M.state.commands = nil
  local sid = require("kin.chat").state.current
  if sid then
    M.fetch(sid)
  end
end

--- The commands of the current session (fetching them if needed, waiting briefly for the
--- answer). kin lists them per session: before the first question there are none to offer.
function M.commands()
  local st = M.state
  local sid = require("kin.chat").state.current
  if not sid then
    return {}
  end
  if st.for_session ~= sid then
    st.commands = nil
  end
  if not st.commands then
    if not st.fetching then
      M.fetch(sid)
    end
    vim.wait(2000, function()
      return st.commands ~= nil
    end, 10)
  end
  return st.commands or {}
end

local workspace_root = require("kin.context").workspace_root

--- Files of the workspace whose path (relative to its first folder) starts with or contains base.
function M.files(base, limit)
  limit = limit or 200
  local root = workspace_root()
  local out = {}
  local ok = pcall(function()
    for name, kind in vim.fs.dir(root, { depth = 8, skip = function(dir)
      return not dir:match("^%.") and dir ~= "node_modules"
    end }) do
      if kind == "file" and not name:match("^%.") and not name:match("/%.") then
        if base == "" or name:find(base, 1, true) then
          out[#out + 1] = name
          if #out >= limit then
            break
          end
        end
      end
    end
  end)
  if not ok then
    return {}
  end
  table.sort(out, function(a, b)
    local pa, pb = a:sub(1, #base) == base, b:sub(1, #base) == base
    if pa ~= pb then
      return pa
    end
    return a < b
  end)
  return out
end

--- Loaded file buffers: { name (relative to the workspace when inside it), buf }.
function M.buffers()
  local root = workspace_root()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.bo[b].buflisted then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" then
        local rel = vim.fs.normalize(name)
        if rel:sub(1, #root + 1) == root .. "/" then
          rel = rel:sub(#root + 2)
        end
        out[#out + 1] = { name = rel, buf = b }
      end
    end
  end
  return out
end

-- Where the word being completed starts (0-based byte column), and its trigger.
local function trigger()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  local before = line:sub(1, col)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  if row == 1 and before:match("^/[%w_.:%-]*$") then
    return 0, "/"
  end
  local s = before:match("()[@#][^%s@#]*$")
  if s then
    local ch = before:sub(s, s)
    -- A mention starts a word.
    if s == 1 or before:sub(s - 1, s - 1):match("%s") then
      return s - 1, ch
    end
  end
  return nil
end

--- 'omnifunc' of the input buffer.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local start = trigger()
    return start or -3
  end
  local items = {}
  local ch = base:sub(1, 1)
  local rest = base:sub(2)
  if ch == "/" then
    for _, c in ipairs(M.commands()) do
      if c.name:sub(1, #rest) == rest then
        items[#items + 1] = {
          word = "/" .. c.name .. " ",
          abbr = "/" .. c.name .. (c.inputHint and (" " .. c.inputHint) or ""),
          menu = c.source ~= "kin" and ("[" .. tostring(c.source) .. "]") or "[kin]",
          info = c.description or "",
        }
      end
    end
  elseif ch == "@" then
    for _, f in ipairs(M.files(rest)) do
      items[#items + 1] = { word = "@" .. f, menu = "[file]" }
    end
  elseif ch == "#" then
    for _, b in ipairs(M.buffers()) do
      if rest == "" or b.name:find(rest, 1, true) then
        items[#items + 1] = { word = "#" .. b.name, menu = "[buffer]" }
      end
    end
  end
  return items
end

--- Sets up completion in the input buffer: the omnifunc, and opening it as `/` (at the start of
--- the question), `@` or `#` (at the start of a word) are typed.
function M.attach(buf, auto)
  vim.bo[buf].omnifunc = "v:lua.require'kin.complete'.omnifunc"
  if not auto then
    return
  end
  vim.api.nvim_create_autocmd("TextChangedI", {
    buffer = buf,
    callback = function()
      local start, ch = trigger()
      if not start or vim.fn.pumvisible() == 1 then
        return
      end
      local col = vim.api.nvim_win_get_cursor(0)[2]
      if col == start + 1 and (ch == "/" or ch == "@" or ch == "#") then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-x><C-o>", true, false, true), "n", false)
      end
    end,
  })
end

return M
