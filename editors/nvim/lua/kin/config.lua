-- Options of kin.nvim and their defaults (documented in doc/kin.txt, |kin-options|).
local M = {}

M.defaults = {
  -- How to start the service. The plugin appends `--log-file <log_file>` when log_file is set.
  cmd = { "kin", "serve" },
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
  chat = {
    -- "below", "above", "left", "right" or "tab": where :KinChat opens the transcript.
    position = "right",
    width = 0.4, -- fraction of the columns for a vertical split
    height = 0.5, -- fraction of the lines for a horizontal split
    input_height = 3,
    keymaps = {
      send = { n = "<CR>", i = "<C-s>" },
      cancel = "<C-c>",
      close = "q",
    },
  },
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

function M.log_file()
  local f = M.options.log_file
  if f == false then
    return nil
  end
  return f or (vim.fn.stdpath("log") .. "/kin.log")
end

return M
