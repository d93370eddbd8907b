-- The editor's buffers, as kin sees them (PROTOCOL.md "Documents"): every loaded buffer of a
-- file is announced (textDocument/didOpen), followed change by change with UTF-16 ranges
-- computed the way Neovim's LSP client does (nvim_buf_attach on_lines, vim.lsp.sync), and closed
-- (didClose). kin's approved edits of an open buffer arrive as workspace/applyEdit and are applied
-- to the buffer (one undo step), only at the version kin's diff was made from, and saved when the
-- buffer had no unsaved changes (so commands see them); files kin wrote on disk
-- (workspace/didChangeFiles) are reloaded where the buffer has no unsaved changes. It never saves
-- the person's unsaved changes and never touches a buffer the person changed since kin looked.
local config = require("kin.config")
local sync = require("vim.lsp.sync")

local M = {}

-- A failure while following a buffer is said once, on one line, later: an error raised inside
-- on_lines would show as a multi-line message whose more-prompt eats the person's typing.
local reported = false
local function guard(fn, ...)
  local ok, err = pcall(fn, ...)
  if not ok and not reported then
    reported = true
    vim.schedule(function()
      require("kin.service").notify("kin.nvim: following a buffer failed: " .. tostring(err), vim.log.levels.WARN)
    end)
  end
end

---@class kin.DocState
---@field uri string
---@field version integer      the version kin was last told (b:changedtick of that change)
---@field lines string[]       the buffer's lines as kin was last told

---@class kin.DocumentsState
---@field client kin.Client?    the service the buffers are announced to
---@field gen integer           bumped at each start: an attachment of an older one detaches
---@field docs table<integer, kin.DocState> by buffer
M.state = { gen = 0, docs = {} }

local function enabled()
  local d = config.options.documents or {}
  return d.sync ~= false
end

--- The file: URI of a buffer kin should know about, or nil (no name, not a file, special).
function M.uri(buf)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return nil
  end
  local uri = vim.uri_from_bufnr(buf)
  if not uri:match("^file://") then
    return nil
  end
  return uri
end

-- The whole text, as the file would hold it once written (LSP's _buf_get_full_text).
local function line_ending(buf)
  return ({ dos = "\r\n", unix = "\n", mac = "\r" })[vim.bo[buf].fileformat] or "\n"
end

function M.full_text(buf)
  local eol = line_ending(buf)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), eol)
  if vim.bo[buf].eol then
    text = text .. eol
  end
  return text
end

local function send(method, params)
  local c = M.state.client
  if c and c:is_running() then
    c:notify(method, params)
  end
end

local function did_change_full(buf, doc, tick)
  doc.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, true)
  doc.version = tick
  send("textDocument/didChange", {
    textDocument = { uri = doc.uri, version = tick },
    contentChanges = { { text = M.full_text(buf) } },
  })
end

--- Announces a buffer (again: a second didOpen replaces what kin had) and follows its changes.
function M.open(buf)
  if not (enabled() and M.state.client) then
    return
  end
  local uri = M.uri(buf)
  if not uri then
    return
  end
  local st = M.state
  local had = st.docs[buf]
  if had and had.uri ~= uri then
    M.close(buf) -- renamed (:saveas, :file)
  end
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local doc = { uri = uri, version = tick, lines = vim.api.nvim_buf_get_lines(buf, 0, -1, true), gen = st.gen }
  local attached = had and had.gen == st.gen and had.attached
  st.docs[buf] = doc
  send("textDocument/didOpen", {
    textDocument = { uri = uri, languageId = vim.bo[buf].filetype, version = tick, text = M.full_text(buf) },
  })
  if attached then
    doc.attached = true
    return
  end
  local gen = st.gen
  doc.attached = vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, changedtick, firstline, lastline, new_lastline)
      local d = M.state.docs[b]
      if M.state.gen ~= gen or not d then
        return true -- detach: another service, or closed
      end
      guard(M.changed, b, d, changedtick, firstline, lastline, new_lastline)
    end,
    on_reload = function(_, b)
      local d = M.state.docs[b]
      if M.state.gen == gen and d then
        guard(did_change_full, b, d, vim.api.nvim_buf_get_changedtick(b))
      end
    end,
    on_detach = function(_, b)
      local d = M.state.docs[b]
      if d and d.gen == gen then
        d.attached = false
      end
    end,
  })
end

--- One change of an attached buffer: sends the range that changed, in UTF-16.
function M.changed(buf, doc, tick, firstline, lastline, new_lastline)
  local prev = doc.lines
  -- The new lines: the old ones around the change, the changed ones read from the buffer.
  local changed = vim.api.nvim_buf_get_lines(buf, firstline, new_lastline, true)
  local curr = {}
  for i = 1, firstline do
    curr[i] = prev[i]
  end
  for i = firstline + 1, new_lastline do
    curr[i] = changed[i - firstline]
  end
  for i = lastline + 1, #prev do
    curr[i - lastline + new_lastline] = prev[i]
  end
  if #curr == 0 or (#curr == 1 and curr[1] == "") then
    -- An emptied buffer: vim.lsp.sync's range would take its final newline too (the buffer
    -- still has its one, empty, line); say it whole.
    return did_change_full(buf, doc, tick)
  end
  local change = sync.compute_diff(prev, curr, firstline, lastline, new_lastline, "utf-16", line_ending(buf))
  doc.lines = curr
  doc.version = tick
  send("textDocument/didChange", {
    textDocument = { uri = doc.uri, version = tick },
    contentChanges = { { range = change.range, text = change.text } },
  })
end

--- The buffer is no longer open for kin (unloaded, wiped, renamed).
function M.close(buf)
  local doc = M.state.docs[buf]
  if not doc then
    return
  end
  M.state.docs[buf] = nil
  send("textDocument/didClose", { textDocument = { uri = doc.uri } })
end

-- The buffer of a file: URI or path kin names (symlinks resolved on both sides).
local function real(path)
  return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
end

function M.buffer_of(uri_or_path)
  local path = uri_or_path
  if path:match("^file://") then
    path = vim.uri_to_fname(path)
  end
  local want = real(path)
  for b, doc in pairs(M.state.docs) do
    if vim.api.nvim_buf_is_valid(b) and (doc.uri == uri_or_path or real(vim.api.nvim_buf_get_name(b)) == want) then
      return b
    end
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" and real(name) == want then
        return b
      end
    end
  end
end

--- workspace/applyEdit: applies kin's edit to the buffer, as one undo step, only when the buffer
--- is still at the version kin's diff was made from; saves it when it had no unsaved changes.
function M.apply_edit(params)
  local changes = params.edit and params.edit.documentChanges
  if type(changes) ~= "table" or #changes == 0 then
    return { applied = false, failureReason = "kin.nvim applies documentChanges only" }
  end
  -- Check every document first: nothing is applied unless all of it can be.
  local plan = {}
  for _, dc in ipairs(changes) do
    local td = dc.textDocument or {}
    local buf = td.uri and M.buffer_of(td.uri)
    local doc = buf and M.state.docs[buf]
    local name = td.uri and vim.fn.fnamemodify(vim.uri_to_fname(td.uri), ":t") or "?"
    if not doc then
      return { applied = false, failureReason = name .. " is not open in this Neovim" }
    end
    if td.version ~= nil and td.version ~= vim.NIL and td.version ~= doc.version then
      return {
        applied = false,
        failureReason = ("%s changed since kin read it (version %s, now %s)"):format(name, tostring(td.version), tostring(doc.version)),
      }
    end
    plan[#plan + 1] = { buf = buf, edits = dc.edits or {} }
  end
  local saved = #plan > 0
  for _, step in ipairs(plan) do
    local buf = step.buf
    -- A buffer without unsaved changes is written at once (disk and buffer agree, so a command
    -- kin runs next reads kin's edit, and :e! cannot drop it); one with the person's unsaved
    -- changes gets kin's edit unsaved, beside them.
    local clean = M.matches_disk(buf)
    -- A new undo step: the edit never joins what the person typed last (:help undo-break).
    vim.api.nvim_buf_call(buf, function()
      vim.bo[buf].undolevels = vim.bo[buf].undolevels
    end)
    local listed = vim.bo[buf].buflisted
    require("vim.lsp.util").apply_text_edits(step.edits, buf, "utf-16")
    vim.bo[buf].buflisted = listed
    saved = saved and clean and M.write(buf)
  end
  return { applied = true, saved = saved or nil }
end

--- Whether a buffer holds exactly what its file on disk holds (not modified, and the file not
--- changed behind its back).
function M.matches_disk(buf)
  if vim.bo[buf].modified then
    return false
  end
  local f = io.open(vim.api.nvim_buf_get_name(buf), "rb")
  if not f then
    return false
  end
  local disk = f:read("*a")
  f:close()
  return disk == M.full_text(buf)
end

--- Writes a buffer kin just edited, exactly as it is: BufWritePre and FileWritePre hooks do not
--- run (a formatter on save would write something other than what the person approved), the
--- others do (an LSP client hears of the save). Returns whether it was written.
function M.write(buf)
  local ignore = vim.o.eventignore
  vim.o.eventignore = (ignore == "" and "" or (ignore .. ",")) .. "BufWritePre,FileWritePre"
  local ok = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt lockmarks write!")
  end)
  vim.o.eventignore = ignore
  return ok and not vim.bo[buf].modified
end

--- workspace/didChangeFiles: reloads each open, unmodified buffer of a file kin wrote; a buffer
--- with unsaved changes is left alone (and the person told).
function M.files_changed(params)
  for _, ch in ipairs(params.changes or {}) do
    local buf = M.buffer_of(ch.uri or ch.path or "")
    if buf and vim.api.nvim_buf_is_loaded(buf) then
      if vim.bo[buf].modified then
        require("kin.service").notify(
          ("kin changed %s on disk; your buffer has unsaved changes, so it was left as it is"):format(
            vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":~:.")
          ),
          vim.log.levels.WARN
        )
      else
        M.reload(buf)
      end
    end
  end
end

--- Re-reads an unmodified buffer from disk without asking (:checktime with 'autoread').
function M.reload(buf)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("setlocal autoread")
    pcall(vim.cmd, "silent checktime " .. buf)
    vim.cmd("setlocal autoread<")
  end)
end

--- A service is ready: announce every open buffer to it and follow them from now on.
function M.start(client)
  local st = M.state
  st.gen = st.gen + 1
  st.docs = {}
  st.client = nil
  local init = require("kin.service").ctx.init or {}
  local caps = init.capabilities and init.capabilities.textDocuments
  if not enabled() or not (caps and caps.sync) then
    return
  end
  st.client = client
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    M.open(buf)
  end
  local group = vim.api.nvim_create_augroup("kin_documents", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    callback = function(ev)
      M.open(ev.buf)
    end,
  })
  -- 'endofline' and 'fileformat' change the text a file gets without a change of the lines.
  vim.api.nvim_create_autocmd("OptionSet", {
    group = group,
    pattern = { "endofline", "fileformat" },
    callback = function()
      local b = vim.api.nvim_get_current_buf()
      local d = M.state.docs[b]
      if d and vim.v.option_type ~= "global" then
        guard(did_change_full, b, d, vim.api.nvim_buf_get_changedtick(b))
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    callback = function(ev)
      M.close(ev.buf)
    end,
  })
end

--- The service stopped: nothing is announced until the next one starts.
function M.stop()
  M.state.client = nil
  M.state.docs = {}
  M.state.gen = M.state.gen + 1
  pcall(vim.api.nvim_del_augroup_by_name, "kin_documents")
end

return M
