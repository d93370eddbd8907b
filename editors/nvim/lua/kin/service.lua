-- The one `kin serve` of this Neovim: started lazily on first use, initialized once, stopped
-- with shutdown/exit on VimLeavePre. Holds the explicit plugin state (`M.ctx`).
local config = require("kin.config")
local client_mod = require("kin.client")

local M = {}

local VERSION = "0.1.0"
M.VERSION = VERSION

---@class kin.Context
---@field client kin.Client?      the running service, if any
---@field ready boolean           initialize answered and initialized sent
---@field init table?             the initialize result (model, capabilities, workspaceFolders)
---@field waiting function[]      callbacks waiting for ready
---@field mcp table<string, table> last mcp/status per server
---@field stopping boolean
M.ctx = { ready = false, waiting = {}, mcp = {}, stopping = false }

--- Notification handlers by method, filled by kin.init.
---@type table<string, fun(params: table)>
M.handlers = {}
--- Handlers of kin's requests (workspace/applyEdit) by method: fn(params) -> result, err.
---@type table<string, fun(params: table): (any, table?)>
M.request_handlers = {}
--- Called (with no arguments) whenever the service stops or dies.
---@type function[]
M.on_stop = {}
--- Called with the client each time a service is initialized (after `initialized` is sent).
---@type fun(client: kin.Client)[]
M.on_ready = {}
--- Called (with no arguments) when what waited for the service is dropped (it could not start).
---@type function[]
M.on_fail = {}

-- Neovim's own vim.notify echoes in the command line: a message that does not fit on its one
-- line raises the hit-enter (or more) prompt, which takes the next keys the person types. kin's
-- messages come at any time, so with the builtin notify each is cut to what fits (the first
-- line, up to 'v:echospace'); a notification plugin gets them whole.
local function builtin_notify()
  local info = debug.getinfo(vim.notify, "S")
  return info and info.source and info.source:find("vim/_editor.lua", 1, true) ~= nil
end
M.builtin_notify = builtin_notify

--- A message cut to what the command line shows without a prompt.
function M.fit(msg)
  msg = tostring(msg or "")
  local first = msg:match("^[^\n]*")
  local room = (vim.v.echospace > 0 and vim.v.echospace or (vim.o.columns - 12)) - 1
  room = math.max(10, room)
  if vim.fn.strdisplaywidth(first) > room or #first < #msg then
    local cut = vim.fn.strcharpart(first, 0, room - 1)
    while vim.fn.strdisplaywidth(cut) > room - 1 do
      cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
    end
    first = cut .. "…"
  end
  return first
end

--- Shows a message from kin or about it (title "kin" unless given); see M.fit.
local function notify(msg, level, title)
  if builtin_notify() then
    msg = M.fit(msg)
  end
  vim.notify(msg, level or vim.log.levels.INFO, { title = title or "kin" })
end
M.notify = notify

function M.reset()
  M.ctx = { ready = false, waiting = {}, mcp = {}, stopping = false }
end

local function dispatch(method, params)
  local h = M.handlers[method]
  if h then
    local ok, err = pcall(h, params)
    if not ok then
      notify(("kin.nvim: error handling %s: %s"):format(method, err), vim.log.levels.ERROR)
    end
  end
end

local function workspace_folders()
  local folders = config.options.workspace_folders or { config.options.cwd or vim.uv.cwd() }
  local out = {}
  for _, f in ipairs(folders) do
    local path = vim.fs.normalize(vim.fn.fnamemodify(f, ":p")):gsub("/$", "")
    out[#out + 1] = { uri = vim.uri_from_fname(path), name = vim.fs.basename(path) }
  end
  return out
end

local function on_request(method, params)
  local h = M.request_handlers[method]
  if not h then
    return nil, nil
  end
  return h(params)
end

--- The command line used to start kin.
function M.command()
  local opts = config.options
  local cmd = config.cmd()
  local log = config.log_file()
  if log then
    vim.fn.mkdir(vim.fs.dirname(log), "p")
    vim.list_extend(cmd, { "--log-file", log })
  end
  if opts.log_level then
    vim.list_extend(cmd, { "--log-level", tostring(opts.log_level) })
  end
  if opts.trace_file then
    vim.list_extend(cmd, { "--trace", opts.trace_file })
  end
  return cmd
end

--- What this editor can do, as initialize declares it.
function M.capabilities()
  local docs = config.options.documents or {}
  local caps = { approvals = true, elicitation = { form = true, url = true } }
  if docs.sync ~= false then
    caps.textDocuments = { sync = true, applyEdit = docs.apply_edit ~= false }
  end
  return caps
end

-- What waited for the service will not run: those who asked are told (M.on_fail).
local function fail_waiting()
  M.ctx.waiting = {}
  for _, fn in ipairs(M.on_fail) do
    pcall(fn)
  end
end

local function stopped()
  for _, fn in ipairs(M.on_stop) do
    pcall(fn)
  end
end

local start

-- The first start of a kin.nvim that has no kin yet builds it (kin.build), in the background;
-- what waits for the service waits for the build too. Returns true when start must wait.
local function built_first()
  local build = require("kin.build")
  local need, cannot = build.needed()
  if not need then
    return false
  end
  if cannot then
    fail_waiting()
    notify(cannot, vim.log.levels.ERROR)
    return true
  end
  build.start(function(ok)
    if not ok then
      return fail_waiting() -- kin.build said why
    end
    if #M.ctx.waiting > 0 and not M.is_running() then
      start()
    end
  end)
  return true
end

function start()
  if built_first() then
    return
  end
  local opts = config.options
  local ctx = M.ctx
  local client
  client = client_mod.new({
    cmd = M.command(),
    env = next(opts.env or {}) and opts.env or nil,
    cwd = opts.cwd,
    spawn = opts.spawn,
    schedule = opts.schedule,
    on_notification = dispatch,
    on_request = on_request,
    on_exit = function(code, signal)
      if M.ctx.client ~= client then
        return
      end
      M.ctx.client = nil
      M.ctx.ready = false
      fail_waiting()
      if not M.ctx.stopping then
        local tail = table.concat(client.stderr_tail, "\n", math.max(1, #client.stderr_tail - 5))
        notify(
          ("kin exited (code %s%s). :KinLog shows its log; the next command starts it again.%s"):format(
            tostring(code),
            signal ~= 0 and signal ~= nil and (", signal " .. signal) or "",
            tail ~= "" and ("\n" .. tail) or ""
          ),
          vim.log.levels.ERROR
        )
      end
      stopped()
    end,
  })
  local ok, err = client:start()
  if not ok then
    fail_waiting()
    notify(("cannot start %s: %s"):format(table.concat(config.cmd(), " "), err), vim.log.levels.ERROR)
    return
  end
  ctx.client = client
  ctx.ready = false
  ctx.stopping = false

  local group = vim.api.nvim_create_augroup("kin_service", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      M.stop()
    end,
  })

  client:request("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "kin.nvim", version = VERSION },
    capabilities = M.capabilities(),
    workspaceFolders = workspace_folders(),
  }, function(ierr, result)
    if M.ctx.client ~= client then
      return
    end
    if ierr then
      notify("initialize failed: " .. tostring(ierr.message), vim.log.levels.ERROR)
      fail_waiting()
      M.stop()
      return
    end
    M.ctx.init = result or {}
    client:notify("initialized", {})
    M.ctx.ready = true
    for _, fn in ipairs(M.on_ready) do
      local ok, e = pcall(fn, client)
      if not ok then
        notify("kin.nvim: " .. tostring(e), vim.log.levels.ERROR)
      end
    end
    local model = M.ctx.init.model
    if model and model.configured == false then
      notify("the model service is not configured: " .. tostring(model.missing or "?"), vim.log.levels.WARN)
    end
    local waiting = M.ctx.waiting
    M.ctx.waiting = {}
    for _, fn in ipairs(waiting) do
      fn(client)
    end
  end)
end

--- Runs fn(client) once the service is initialized, starting it if needed.
---@param fn fun(client: kin.Client)
function M.with_client(fn)
  local ctx = M.ctx
  if ctx.client and ctx.client:is_running() and ctx.ready then
    fn(ctx.client)
    return
  end
  table.insert(ctx.waiting, fn)
  if not (ctx.client and ctx.client:is_running()) then
    start()
  end
end

--- Sends a request once the service is ready; cb(result) on success, errors are shown unless
--- on_error is given (on_error(err) then decides).
function M.request(method, params, cb, on_error)
  M.with_client(function(client)
    client:request(method, params, function(err, result)
      if err then
        if on_error then
          on_error(err)
        else
          notify(("%s failed: %s"):format(method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
        end
        return
      end
      if cb then
        cb(result)
      end
    end)
  end)
end

--- Sends a request and waits for its answer, blocking the editor for at most timeout_ms (while
--- waiting, Neovim's event loop runs, so kin's answer is read). Returns err, result; err is
--- { message = "no answer within N ms" } when none came in time (a late answer is dropped).
---@return table? err
---@return any result
function M.request_sync(method, params, timeout_ms)
  timeout_ms = timeout_ms or 10000
  local done, err, result = false, nil, nil
  M.request(method, params, function(r)
    done, result = true, r
  end, function(e)
    done, err = true, e
  end)
  vim.wait(timeout_ms, function()
    return done
  end, 10)
  if not done then
    return { message = "no answer within " .. tostring(timeout_ms) .. " ms" }, nil
  end
  return err, result
end

--- Waits (blocking, bounded) until the service is initialized. Used by :checkhealth.
---@return boolean ready
function M.wait_ready(timeout_ms)
  local done = false
  M.with_client(function()
    done = true
  end)
  vim.wait(timeout_ms or 10000, function()
    return done or (M.ctx.client == nil)
  end, 20)
  return done
end

function M.is_running()
  return M.ctx.client ~= nil and M.ctx.client:is_running()
end

--- Stops the service: shutdown, exit, then kill after the timeout. Blocks until it is gone.
function M.stop()
  local client = M.ctx.client
  if not client then
    return
  end
  M.ctx.stopping = true
  client:stop(config.options.stop_timeout)
  if M.ctx.client == client then
    M.ctx.client = nil
    M.ctx.ready = false
    stopped()
  end
  M.ctx.stopping = false
end

return M
