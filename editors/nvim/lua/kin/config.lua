-- Options of kin.nvim and their defaults (documented in doc/kin.txt, |kin-options|).
local M = {}

-- The plugin's own folder (editors/nvim): the build step (build.lua) puts kin in its bin/.
M.plugin_dir = vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, "S").source:sub(2)))))

M.defaults = {
  -- How to start the service. nil: the kin the build step made (<plugin>/bin/kin) when it is
  -- there, else `kin` from PATH, with `serve`; with neither, the first start builds it. The
  -- plugin appends `--log-file <log_file>` when log_file is set.
  cmd = nil,
  -- Extra environment for the service (merged over Neovim's own).
  env = {},
  -- Working directory of the service; nil: Neovim's current directory.
  cwd = nil,
  -- Folders the built-in tools may touch (sent as workspaceFolders); nil: { cwd }.
  workspace_folders = nil,
  -- The file kin writes its log to (:KinLog opens it); false: do not pass --log-file.
  log_file = nil, -- nil means stdpath("log") .. "/kin.log"
  -- kin's own log level ("debug", "info", "warn" or "error"), passed as --log-level; nil: kin's
  -- default (info).
  log_level = nil,
  -- Where kin writes every JSON-RPC message in and out (secrets masked), passed as --trace.
  trace_file = nil,
  -- log/message notifications at or above this vim.log.levels value are shown with vim.notify.
  notify_level = vim.log.levels.WARN,
  -- Milliseconds each stop step (shutdown, exit) may take before the process is killed.
  stop_timeout = 2000,
  -- Editor buffers: tell kin what open buffers hold (textDocument/didOpen|didChange|didClose)
  -- and let it apply approved edits to them (workspace/applyEdit), so edits never fight unsaved
  -- changes and undo works. apply_edit = false: kin edits on disk and the buffers are reloaded.
  documents = { sync = true, apply_edit = true },
  -- kin's window for approvals and questions: "bottom" (a full-width split), "top" or "float";
  -- height: the most of 'lines' the body may take; width: a float's fraction of 'columns'.
  approval = { position = "bottom", height = 0.5, width = 0.8 },
  chat = {
    -- "below", "above", "left", "right" or "tab": where :KinChat opens the transcript.
    position = "right",
    width = 0.4, -- fraction of the columns for a vertical split
    height = 0.5, -- fraction of the lines for a horizontal split
    input_height = 3,
    -- Open completion by itself as `/` (a command), `@` (a file) or `#` (a buffer) is typed.
    complete = true,
    keymaps = {
      send = { n = "<CR>", i = "<C-s>" }, -- input
      cancel = "<C-c>", -- input and transcript
      -- transcript:
      close = "q",
      retry = "R", -- ask the last question again
      edit_last = "I", -- edit the last question in the input
      yank_code = "gy", -- yank the code block under the cursor
      put_code = "gp", -- put it below the cursor of the window you work in
      open = { "gf", "<CR>" }, -- open the file (path:line) under the cursor
      next_turn = "]]",
      prev_turn = "[[",
    },
  },
  -- How an address a server asks to visit is opened: nil uses vim.ui.open; a function(url)
  -- returning true (opened) or false/nil and a message (not opened).
  open_url = nil,
  -- Test hooks: replace the side effects (process spawn, main-loop scheduling).
  spawn = nil, -- function(cmd, opts) -> { pid, write(data), close(), kill(sig) }
  schedule = nil, -- function(fn)
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- Lists are replaced, not merged.
  if opts and opts.cmd then
    M.options.cmd = vim.deepcopy(opts.cmd)
  end
  return M.options
end

--- The kin the build step made (kin.build), if it is there.
function M.built_kin()
  local exe = require("kin.build").exe()
  if vim.fn.executable(exe) == 1 then
    return exe
  end
end

--- The command that starts the service (without the log and trace flags).
function M.cmd()
  if M.options.cmd then
    return vim.deepcopy(M.options.cmd)
  end
  return { M.built_kin() or "kin", "serve" }
end

function M.log_file()
  local f = M.options.log_file
  if f == false then
    return nil
  end
  return f or (vim.fn.stdpath("log") .. "/kin.log")
end

return M
