-- A second Neovim, driven as a person drives one: keys go in through nvim_input and are handled
-- by its own main loop, in whatever mode it is in, interleaved with what kin sends it. The
-- plugin runs inside it against the real kin. A test starts it, types, and asks it what it shows.
local M = {}

local Embedded = {}
Embedded.__index = Embedded

-- Every one started and not stopped yet (M.stop_all).
local started = {}

---@param opts {cwd: string, setup: table, env?: table<string, string>}
function M.start(opts)
  local nvim = vim.env.KIN_TEST_NVIM or vim.v.progpath
  local env = vim.tbl_extend("force", {
    KIN_TEST_ROOT = vim.env.KIN_TEST_ROOT,
    XDG_STATE_HOME = vim.fn.tempname(),
  }, opts.env or {})
  local chan = vim.fn.jobstart({ nvim, "--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n" }, {
    rpc = true,
    cwd = opts.cwd,
    env = env,
  })
  assert(chan > 0, "cannot start an embedded Neovim")
  local e = setmetatable({ chan = chan }, Embedded)
  started[#started + 1] = e
  e:lua([[
    local root, setup = ...
    vim.o.swapfile = false
    vim.opt.rtp:prepend(root)
    vim.opt.rtp:append(root .. "/tests")
    package.path = root .. "/tests/?.lua;" .. package.path
    vim.cmd("runtime plugin/kin.lua")
    _G.kin_notes = {}
    _G.builtin_notify = vim.notify
    vim.notify = function(msg, level)
      table.insert(_G.kin_notes, { msg = msg, level = level })
    end
    require("kin").setup(setup)
  ]], vim.env.KIN_TEST_ROOT, opts.setup)
  return e
end

--- One with kin.nvim on the real kin (KIN_BIN), in ws, with home as KIN_HOME (a new one when nil)
--- and its log there.
function M.with_kin(ws, home)
  home = home or (vim.fn.tempname() .. "-kin-home")
  vim.fn.mkdir(home, "p")
  return M.start({
    cwd = ws,
    setup = { cmd = { vim.env.KIN_BIN, "serve" }, env = { KIN_HOME = home }, log_file = home .. "/kin.log" },
  })
end

--- Stops every one started (a spec's after_each), so none outlives its case.
function M.stop_all()
  local all = started
  started = {}
  for _, e in ipairs(all) do
    e:stop()
  end
end

--- Runs Lua in the embedded Neovim and returns its result.
function Embedded:lua(code, ...)
  return vim.rpcrequest(self.chan, "nvim_exec_lua", code, { ... })
end

--- Types keys (as in a mapping: "<CR>", "<Esc>"), handled by its main loop in its current mode.
function Embedded:input(keys)
  return vim.rpcrequest(self.chan, "nvim_input", keys)
end

function Embedded:mode()
  return vim.rpcrequest(self.chan, "nvim_get_mode").mode
end

--- Waits until the Lua expression code (returning a value) is truthy there.
--- (An RPC request cannot be made from inside vim.wait's condition, so this polls in a loop.)
function Embedded:wait(code, what, timeout)
  return M.poll(function()
    local value = self:lua(code)
    -- nil comes back over RPC as vim.NIL, which is true in Lua: it means "not yet".
    return value ~= vim.NIL and value
  end, what or code, timeout, 3)
end

--- Calls fn until it returns a truthy value, letting events run between calls.
function M.poll(fn, what, timeout, level)
  local deadline = vim.uv.now() + (timeout or 20000)
  while true do
    local value = fn()
    if value then
      return value
    end
    if vim.uv.now() > deadline then
      error("timed out waiting for " .. tostring(what), level or 2)
    end
    vim.wait(20)
  end
end

--- The RPC trace of its client to kin, for a failure message.
function Embedded:trace()
  return self:lua([[
    local c = require("kin.service").ctx.client
    return c and table.concat(c.trace, "\n") or ""
  ]])
end

function Embedded:stop()
  pcall(self.lua, self, [[require("kin.service").stop()]])
  pcall(vim.rpcnotify, self.chan, "nvim_command", "qa!")
  vim.fn.jobwait({ self.chan }, 5000)
  pcall(vim.fn.jobstop, self.chan)
end

return M
