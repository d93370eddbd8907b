-- What the specs that drive the real `kin serve` share. tests/run.sh builds kin and the scripted
-- mock model (tests/rules.json) and sets KIN_BIN, OPENAI_BASE_URL and OPENAI_API_KEY; a spec that
-- needs them calls need_kin() first. Each case gets a fresh KIN_HOME and workspace (fresh()), and
-- reads what kin did from the chat and from the client's RPC trace.
local t = require("harness")

local M = {}

M.KIN = vim.env.KIN_BIN

-- need_kin skips the spec when there is no kin to run.
function M.need_kin()
  if not M.KIN or vim.fn.executable(M.KIN) ~= 1 then
    t.skip("KIN_BIN is not set: tests/run.sh builds kin and the mock model")
  end
end

-- setup starts kin.nvim on the real kin with env's KIN_HOME (extra is merged into the options).
function M.setup(env, extra)
  require("kin").setup(vim.tbl_deep_extend("force", {
    cmd = { M.KIN, "serve" },
    env = { KIN_HOME = env.home },
    log_file = env.home .. "/kin.log",
  }, extra or {}))
end

-- fresh fills env with a new KIN_HOME and workspace (its real path, as kin reports it) and makes
-- the workspace the current directory.
function M.fresh(env)
  env.home = vim.fn.tempname() .. "-kin-home"
  vim.fn.mkdir(env.home, "p")
  env.ws = vim.fn.tempname() .. "-ws"
  vim.fn.mkdir(env.ws, "p")
  env.ws = vim.uv.fs_realpath(env.ws)
  vim.cmd.cd(env.ws)
end

function M.current()
  return require("kin.chat").current()
end

function M.text()
  return M.current():text_content()
end

function M.turn_over()
  local tr = M.current()
  return tr.last == "end" and not tr.running
end

-- traced lists the messages in the client's RPC trace ("->" sent, "<-" received) with this
-- method.
function M.traced(dir, method)
  local out = {}
  local client = require("kin.service").ctx.client
  for _, line in ipairs(client and client.trace or {}) do
    if line:sub(1, 2) == dir then
      local ok, msg = pcall(vim.json.decode, line:sub(4))
      if ok and type(msg) == "table" and msg.method == method then
        out[#out + 1] = msg
      end
    end
  end
  return out
end

function M.sent(method)
  return M.traced("->", method)
end

-- ask_and_wait asks q and waits until the chat shows it and its turn is over.
function M.ask_and_wait(q)
  require("kin").ask(q)
  t.wait_for(function()
    return M.text():find(q, 1, true) and M.turn_over()
  end, "the turn of " .. q .. " to end", 60000)
end

-- winbar is the chat's title bar as kin.nvim draws it.
function M.winbar()
  return require("kin.status").text(M.current())
end

return M
