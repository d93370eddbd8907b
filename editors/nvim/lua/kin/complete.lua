-- Completion in the chat's input buffer ('omnifunc', and opened by itself as the trigger
-- characters are typed): `/name` from kin's commands/list (kin's own commands and the MCP
-- servers' prompts, refreshed on commands/changed), `@path` for a file of the workspace and
-- `#name` for a loaded buffer (sent as input parts, see kin.mentions).
local service = require("kin.service")

local M = {}

---@class kin.CompleteState
---@field commands table[]?   commands/list's rows, nil until fetched (or after commands/changed)
---@field for_session string?
---@field fetching string?     the session whose commands/list is on its way
M.state = {}

function M.reset()
  M.state = {}
end

--- kin's own commands (kin's `commands/list`, source "kin"), offered before kin answers one:
--- before the first question, while kin starts, before the session's list came. The golden
--- test checks them against the list kin sends.
M.KIN_COMMANDS = {
  { name = "compact", description = "Summarise the conversation so far to free context", source = "kin" },
  { name = "undo", description = "Undo the file changes of the last turn that changed files (or of the named turn)", inputHint = "[turnId]", source = "kin" },
  { name = "plan", description = "Show the current plan", source = "kin" },
  { name = "review", description = "Review a change: the uncommitted changes, a branch against its base, or one commit", inputHint = "[base NAME | commit SHA]", source = "kin" },
  { name = "mode", description = "Show or set the session's mode", inputHint = "[ask | agent | auto-edit]", source = "kin" },
  { name = "model", description = "Show or set the session's model (and reasoning effort)", inputHint = "[model [effort]]", source = "kin" },
  { name = "grants", description = "List the standing \"always allow\" grants", source = "kin" },
  { name = "mcp", description = "List the MCP servers and their state", source = "kin" },
  { name = "skills", description = "List the skills: yours, the project's (trusted or not), the MCP servers'", source = "kin" },
  { name = "trust", description = "List what you trusted (MCP servers, the project's skills, hooks and instructions), or revoke one", inputHint = "[revoke ID]", source = "kin" },
}

-- The input buffer is completing a /command now (its menu is open): the list that just came
-- replaces the one it shows, filtered by what was typed since.
local function complete_again()
  local chat = require("kin.chat")
  if vim.api.nvim_get_current_buf() ~= chat.state.input_buf or vim.fn.mode() ~= "i" or vim.fn.pumvisible() ~= 1 then
    return
  end
  if vim.api.nvim_get_current_line():match("^/[%w_.:%-]*$") then
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-x><C-o>", true, false, true), "n", false)
  end
end

--- Fetches commands/list (for the session questions go to); cb(commands) when it came.
function M.fetch(session_id, cb)
  local st = M.state
  st.fetching = session_id
  service.request("commands/list", { sessionId = session_id }, function(r)
    if st.fetching == session_id then
      st.fetching = nil
    end
    st.commands = r and r.commands or {}
    st.for_session = session_id
    complete_again()
    if cb then
      cb(st.commands)
    end
  end, function(err)
    if st.fetching == session_id then
      st.fetching = nil
    end
    if err.code ~= -32601 then
      service.notify("commands/list failed: " .. tostring(err.message), vim.log.levels.WARN)
    end
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

--- The commands to offer now, without waiting: the current session's list once kin sent it,
--- kin's own until then (the session's list is asked for meanwhile, and replaces them in the
--- open menu when it comes).
function M.commands()
  local st = M.state
  local sid = require("kin.chat").state.current
  if sid and st.for_session == sid and st.commands then
    return st.commands
  end
  if sid and st.fetching ~= sid and service.is_running() then
    M.fetch(sid)
  end
  return M.KIN_COMMANDS
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
    vim.list_extend(items, require("kin.resources").complete(rest))
  elseif ch == "#" then
    for _, b in ipairs(M.buffers()) do
      if rest == "" or b.name:find(rest, 1, true) then
        items[#items + 1] = { word = "#" .. b.name, menu = "[buffer]" }
      end
    end
  end
  return items
end

-- What 'completeopt' must hold while the input is completed: a candidate is inserted only once
-- the person picks one (Neovim's default inserts the first at once, so `@main` typed after the
-- menu opened became `@README.mdmain`), and a single candidate shows as a menu too.
function M.completeopt(current)
  local flags = {}
  for _, f in ipairs(vim.split(current or "", ",", { trimempty = true })) do
    if f ~= "longest" then -- 'longest' turns noinsert off
      flags[#flags + 1] = f
    end
  end
  for _, f in ipairs({ "menuone", "noinsert", "noselect" }) do
    if not vim.tbl_contains(flags, f) then
      flags[#flags + 1] = f
    end
  end
  return table.concat(flags, ",")
end

-- 'completeopt' for the input buffer only: its own value where Neovim has a buffer-local one
-- (0.11), else the global one changed while the person types in the input and put back when
-- they leave it (0.10).
local function local_completeopt(buf)
  if vim.api.nvim_get_option_info2("completeopt", {}).scope ~= "global" then
    vim.api.nvim_set_option_value("completeopt", M.completeopt(vim.go.completeopt), { buf = buf })
    return
  end
  local saved
  local function enter()
    if saved == nil then
      saved = vim.go.completeopt
      vim.go.completeopt = M.completeopt(saved)
    end
  end
  local function leave()
    if saved ~= nil then
      -- Unless the person set it meanwhile.
      if vim.go.completeopt == M.completeopt(saved) then
        vim.go.completeopt = saved
      end
      saved = nil
    end
  end
  local group = vim.api.nvim_create_augroup("kin_complete_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd("InsertEnter", { group = group, buffer = buf, callback = enter })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    buffer = buf,
    callback = function()
      if vim.fn.mode():find("^i") then
        enter()
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, { group = group, buffer = buf, callback = leave })
end

local ns = vim.api.nvim_create_namespace("kin_template")

--- A completion picked (CompleteDone): a resource template's `@server:template` just inserted
--- is filled in: its variables are asked for (kin.resources.fill) and the word becomes the
--- `@server:uri` mention of the filled URI, or goes away when one is left empty or cancelled.
function M.on_complete_done(item)
  local ud = type(item) == "table" and item.user_data
  local tpl = type(ud) == "table" and ud.kin_template
  if type(tpl) ~= "table" or type(item.word) ~= "string" then
    return
  end
  local buf = vim.api.nvim_get_current_buf()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local start = col - #item.word
  -- Only when the word is there before the cursor (not when the completion was cancelled).
  if start < 0 or vim.api.nvim_get_current_line():sub(start + 1, col) ~= item.word then
    return
  end
  -- The word is kept by an extmark (what is typed before or after it stays out of it): the
  -- buffer may change while the person is asked.
  local mark = vim.api.nvim_buf_set_extmark(buf, ns, row - 1, start, {
    end_row = row - 1,
    end_col = col,
    right_gravity = true,
    end_right_gravity = false,
  })
  -- Not inside CompleteDone, where the text must not change.
  vim.schedule(function()
    require("kin.resources").fill(tpl.server, tpl.uri, function(uri)
      if not vim.api.nvim_buf_is_valid(buf) then
        return
      end
      local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, mark, { details = true })
      vim.api.nvim_buf_del_extmark(buf, ns, mark)
      if not pos[1] then
        return
      end
      local srow, scol, erow, ecol = pos[1], pos[2], pos[3].end_row, pos[3].end_col
      local text = table.concat(vim.api.nvim_buf_get_text(buf, srow, scol, erow, ecol, {}), "\n")
      if text ~= item.word then
        return -- changed meanwhile: leave the person's text alone
      end
      local mention = uri and ("@" .. tpl.server .. ":" .. uri) or ""
      local win = vim.fn.bufwinid(buf)
      local cursor = win ~= -1 and vim.api.nvim_win_get_cursor(win)
      vim.api.nvim_buf_set_text(buf, srow, scol, erow, ecol, { mention })
      if cursor then
        -- What was typed after the word (a space that ended the completion) stays before the
        -- cursor; else the cursor goes after the mention.
        local after = cursor[1] == erow + 1 and cursor[2] > ecol
        local col = after and (cursor[2] + #mention - (ecol - scol)) or (scol + #mention)
        vim.api.nvim_win_set_cursor(win, { srow + 1, col })
      end
    end)
  end)
end

--- Sets up completion in the input buffer: the omnifunc, a resource template's variables asked
--- for once it is picked, and opening it as `/` (at the start of the question), `@` or `#` (at
--- the start of a word) are typed. Nothing is inserted until the person picks a candidate
--- (<C-n>/<C-p>, then <C-y>), whatever their 'completeopt'.
function M.attach(buf, auto)
  vim.bo[buf].omnifunc = "v:lua.require'kin.complete'.omnifunc"
  local_completeopt(buf)
  vim.api.nvim_create_autocmd("CompleteDone", {
    buffer = buf,
    callback = function()
      M.on_complete_done(vim.v.completed_item)
    end,
  })
  if not auto then
    return
  end
  -- Only a trigger character the person typed opens it: a completion that found nothing puts
  -- its text back, which is a change too, and opening it again there would loop for ever (`#`
  -- with no buffer loaded).
  local typed = false
  vim.api.nvim_create_autocmd("InsertCharPre", {
    buffer = buf,
    callback = function()
      typed = vim.v.char == "/" or vim.v.char == "@" or vim.v.char == "#"
    end,
  })
  vim.api.nvim_create_autocmd("TextChangedI", {
    buffer = buf,
    callback = function()
      if not typed then
        return
      end
      typed = false
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
