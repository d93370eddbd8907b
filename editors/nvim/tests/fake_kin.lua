-- An in-process stand-in for `kin serve`, plugged in through setup({ spawn = fake.spawn }).
-- It decodes the frames the plugin writes, answers requests from a handler table and can push
-- notifications; its output is cut into small chunks to exercise partial-frame decoding.
local framing = require("kin.framing")

local M = {}

local Fake = {}
Fake.__index = Fake

M.DEFER = {}

local sid_n = 0

local defaults = {
  initialize = function()
    return {
      protocolVersion = "1",
      serverInfo = { name = "kin", version = "0.0.0-fake" },
      capabilities = { sessions = true, mcp = true, approvals = true, elicitation = { form = true, url = true } },
      model = { configured = true, model = "fake-model", baseUrl = "http://127.0.0.1:1/v1" },
      workspaceFolders = { vim.uv.cwd() },
    }
  end,
  shutdown = function()
    return vim.NIL
  end,
  ["session/new"] = function(p)
    sid_n = sid_n + 1
    local id = "s_fake_" .. sid_n
    return { session = { sessionId = id, title = p.title or "", createdAt = "", updatedAt = "", turns = 0 } }
  end,
  ["session/resume"] = function(p)
    return { session = { sessionId = p.sessionId, title = "", turns = 0 }, history = {}, pending = {} }
  end,
  ["turn/start"] = function()
    return { turnId = "t_1" }
  end,
  ["turn/cancel"] = function()
    return { cancelled = true }
  end,
  ["approval/respond"] = function()
    return {}
  end,
  ["elicitation/respond"] = function()
    return {}
  end,
  ["mcp/list"] = function()
    return { servers = {}, foreign = {}, warnings = {}, notices = {} }
  end,
}

---@param opts {handlers?: table<string, function>, chunk?: integer}?
function M.new(opts)
  opts = opts or {}
  local fake = setmetatable({
    received = {},
    handlers = opts.handlers or {},
    chunk = opts.chunk or 7,
    alive = false,
    spawned = 0,
  }, Fake)
  fake.spawn = function(cmd, sp)
    fake.cmd, fake.sp, fake.alive = cmd, sp, true
    fake.spawned = fake.spawned + 1
    local dec = framing.decoder()
    return {
      pid = nil,
      write = function(data)
        for _, body in ipairs((dec:feed(data))) do
          local msg = vim.json.decode(body, { luanil = { object = true, array = true } })
          table.insert(fake.received, msg)
          vim.schedule(function()
            fake:_handle(msg)
          end)
        end
      end,
      close = function()
        vim.schedule(function()
          fake:_exit(0, 0)
        end)
      end,
      kill = function(sig)
        vim.schedule(function()
          fake:_exit(nil, sig)
        end)
      end,
    }
  end
  return fake
end

function Fake:_exit(code, sig)
  if not self.alive then
    return
  end
  self.alive = false
  self.sp.on_exit(code or 0, sig or 0)
end

--- Writes one message to the plugin, cut into chunks of self.chunk bytes (two frames may share
--- a chunk when several are sent at once through send_many).
function Fake:send(msg)
  self:send_raw(framing.encode(vim.json.encode(msg)))
end

function Fake:send_raw(data)
  if not self.alive then
    return
  end
  local n = self.chunk
  for i = 1, #data, n do
    self.sp.on_stdout(data:sub(i, i + n - 1))
  end
end

--- Several notifications in one write.
function Fake:send_many(msgs)
  local data = {}
  for _, m in ipairs(msgs) do
    data[#data + 1] = framing.encode(vim.json.encode(m))
  end
  self.sp.on_stdout(table.concat(data))
end

function Fake:notify(method, params)
  self:send({ jsonrpc = "2.0", method = method, params = params })
end

function Fake:_handle(msg)
  if msg.method == "exit" then
    self:_exit(0, 0)
    return
  end
  if msg.id == nil or not msg.method then
    return
  end
  local h = self.handlers[msg.method] or defaults[msg.method]
  if not h then
    self:send({ jsonrpc = "2.0", id = msg.id, error = { code = -32601, message = "method not found: " .. msg.method } })
    return
  end
  local result, err = h(msg.params or {}, self, msg)
  if result == M.DEFER then
    return
  end
  if err then
    self:send({ jsonrpc = "2.0", id = msg.id, error = err })
  else
    self:send({ jsonrpc = "2.0", id = msg.id, result = result == nil and vim.empty_dict() or result })
  end
end

--- Requests (or notifications) of one method the plugin sent, in order.
function Fake:sent(method)
  local out = {}
  for _, m in ipairs(self.received) do
    if m.method == method then
      out[#out + 1] = m
    end
  end
  return out
end

--- The params of every request (or notification) of one method the plugin sent, in order.
function Fake:sent_params(method)
  local out = {}
  for _, m in ipairs(self:sent(method)) do
    out[#out + 1] = m.params
  end
  return out
end

--- Starts the plugin's service (on the fake its setup spawns) and waits until it is initialized.
function M.wait_ready()
  require("kin.service").with_client(function() end)
  require("harness").wait_for(function()
    return require("kin.service").ctx.ready
  end, "ready")
end

function Fake:methods()
  local out = {}
  for _, m in ipairs(self.received) do
    out[#out + 1] = m.method or ("response " .. tostring(m.id))
  end
  return out
end

return M
