-- A JSON-RPC 2.0 client over a spawned `kin serve` (LSP framing on stdin/stdout).
-- It knows nothing about chats or approvals: it correlates responses, hands notifications to
-- one callback and kin's requests (workspace/applyEdit) to another, which answers them at once,
-- and stops the process politely (shutdown, exit, then a kill after a timeout).
local framing = require("kin.framing")

local M = {}

local TRACE_MAX = 400

---@class kin.ProcessHandle
---@field pid integer?
---@field write fun(data: string)
---@field close fun()          close stdin
---@field kill fun(signal: integer|string)

--- The default spawn: vim.system with piped stdio. Callbacks run in the event loop (fast context).
---@return kin.ProcessHandle
function M.system_spawn(cmd, opts)
  local proc = vim.system(cmd, {
    stdin = true,
    cwd = opts.cwd,
    env = opts.env,
    text = false,
    stdout = function(_, data)
      if data then
        opts.on_stdout(data)
      end
    end,
    stderr = function(_, data)
      if data then
        opts.on_stderr(data)
      end
    end,
  }, function(obj)
    opts.on_exit(obj.code, obj.signal)
  end)
  return {
    pid = proc.pid,
    write = function(data)
      if not proc:is_closing() then
        pcall(proc.write, proc, data)
      end
    end,
    close = function()
      pcall(proc.write, proc, nil)
    end,
    kill = function(sig)
      pcall(proc.kill, proc, sig)
    end,
  }
end

---@class kin.Client
---@field cmd string[]
---@field proc kin.ProcessHandle?
---@field pid integer?
---@field exited boolean
---@field exit_code integer?
---@field stderr_tail string[]
---@field trace string[]
local Client = {}
Client.__index = Client

---@param opts {cmd: string[], env?: table, cwd?: string, spawn?: function, schedule?: function,
---  on_notification?: fun(method: string, params: table), on_exit?: fun(code: integer, signal: integer),
---  on_request?: fun(method: string, params: table): (any, table?)}
---@return kin.Client
function M.new(opts)
  return setmetatable({
    cmd = opts.cmd,
    env = opts.env,
    cwd = opts.cwd,
    spawn = opts.spawn or M.system_spawn,
    schedule = opts.schedule or vim.schedule,
    on_notification = opts.on_notification or function() end,
    on_request = opts.on_request,
    on_exit = opts.on_exit or function() end,
    next_id = 0,
    pending = {},
    decoder = framing.decoder(),
    exited = false,
    stderr_tail = {},
    trace = {},
  }, Client)
end

function Client:_trace(dir, text)
  self.trace[#self.trace + 1] = dir .. " " .. text
  if #self.trace > TRACE_MAX then
    table.remove(self.trace, 1)
  end
end

--- Spawns the process. Returns false and a message when it cannot start.
---@return boolean ok, string? err
function Client:start()
  local ok, proc = pcall(self.spawn, self.cmd, {
    env = self.env,
    cwd = self.cwd,
    on_stdout = function(data)
      local bodies, err = self.decoder:feed(data)
      if err then
        self:_trace("!!", err)
      end
      if #bodies > 0 then
        self.schedule(function()
          for _, body in ipairs(bodies) do
            self:_dispatch(body)
          end
        end)
      end
    end,
    on_stderr = function(data)
      self.schedule(function()
        for line in data:gmatch("[^\n]+") do
          self.stderr_tail[#self.stderr_tail + 1] = line
          if #self.stderr_tail > 50 then
            table.remove(self.stderr_tail, 1)
          end
        end
      end)
    end,
    on_exit = function(code, signal)
      self.schedule(function()
        self:_exited(code, signal)
      end)
    end,
  })
  if not ok then
    self.exited = true
    return false, tostring(proc)
  end
  self.proc = proc
  self.pid = proc.pid
  return true
end

function Client:_exited(code, signal)
  if self.exited then
    return
  end
  self.exited = true
  self.exit_code = code
  self:_trace("--", ("exited code=%s signal=%s"):format(code, signal))
  local pending = self.pending
  self.pending = {}
  for _, p in pairs(pending) do
    if p.cb then
      p.cb({ code = -32099, message = "kin exited before answering " .. p.method })
    end
  end
  self.on_exit(code, signal)
end

function Client:_send(msg)
  if self.exited or not self.proc then
    return false
  end
  local body = vim.json.encode(msg)
  self:_trace("->", body)
  self.proc.write(framing.encode(body))
  return true
end

function Client:_dispatch(body)
  self:_trace("<-", body)
  local ok, msg = pcall(vim.json.decode, body, { luanil = { object = true, array = true } })
  if not ok or type(msg) ~= "table" then
    return
  end
  if msg.method then
    if msg.id ~= nil then
      -- kin's requests are answered at once (a machine's answer, never a person's); one this
      -- plugin does not know gets -32601 so kin never waits.
      local result, err
      if self.on_request then
        local ok, r, e = pcall(self.on_request, msg.method, msg.params or {})
        if not ok then
          err = { code = -32603, message = "kin.nvim: " .. tostring(r) }
        else
          result, err = r, e
        end
      end
      if result == nil and err == nil then
        err = { code = -32601, message = "kin.nvim: method not found: " .. msg.method }
      end
      local reply = { jsonrpc = "2.0", id = msg.id }
      if err then
        reply.error = err
      else
        reply.result = result
      end
      self:_send(reply)
      return
    end
    self.on_notification(msg.method, msg.params or {})
    return
  end
  if msg.id ~= nil then
    local p = self.pending[msg.id]
    self.pending[msg.id] = nil
    if p and p.cb then
      p.cb(msg.error, msg.result)
    end
  end
end

local function params_or_empty(params)
  if params == nil or (type(params) == "table" and next(params) == nil) then
    return vim.empty_dict()
  end
  return params
end

--- Sends a request; cb(err, result) runs on the main loop. Returns the request id.
---@param method string
---@param params table?
---@param cb fun(err: {code: integer, message: string}?, result: any)?
---@return integer? id
function Client:request(method, params, cb)
  self.next_id = self.next_id + 1
  local id = self.next_id
  self.pending[id] = { method = method, cb = cb }
  if not self:_send({ jsonrpc = "2.0", id = id, method = method, params = params_or_empty(params) }) then
    self.pending[id] = nil
    if cb then
      self.schedule(function()
        cb({ code = -32099, message = "kin is not running" }, nil)
      end)
    end
    return nil
  end
  return id
end

--- Sends a notification.
function Client:notify(method, params)
  return self:_send({ jsonrpc = "2.0", method = method, params = params_or_empty(params) })
end

--- Asks kin to cancel a long request ($/cancelRequest).
function Client:cancel_request(id)
  return self:notify("$/cancelRequest", { id = id })
end

function Client:is_running()
  return self.proc ~= nil and not self.exited
end

--- Stops the service and waits for it: `shutdown`, then `exit`, then SIGTERM and SIGKILL, each
--- step bounded by timeout_ms. Blocks the editor (vim.wait) for at most about 2 * timeout_ms.
---@param timeout_ms integer?
function Client:stop(timeout_ms)
  timeout_ms = timeout_ms or 2000
  if not self:is_running() then
    return true
  end
  local answered = false
  self:request("shutdown", nil, function()
    answered = true
  end)
  vim.wait(timeout_ms, function()
    return answered or self.exited
  end, 10)
  self:notify("exit")
  self.proc.close()
  if vim.wait(timeout_ms, function()
    return self.exited
  end, 10) then
    return true
  end
  self.proc.kill(15)
  if vim.wait(500, function()
    return self.exited
  end, 10) then
    return true
  end
  self.proc.kill(9)
  return vim.wait(500, function()
    return self.exited
  end, 10)
end

M.Client = Client
return M
