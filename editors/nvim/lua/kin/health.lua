-- :checkhealth kin — the binary and its version, the model configuration (whether a key is
-- present, never its value) and whether the model service answers, whether commands run
-- confined, and each MCP server's state.
local config = require("kin.config")
local service = require("kin.service")

local M = {}

local h = vim.health
M.warning_text = function(w)
  return require("kin.mcp").warning_text(w)
end

local mcp_levels = {
  connected = "ok",
  disabled = "info",
  connecting = "info",
  stopped = "info",
  awaiting_trust = "warn",
  needs_login = "warn",
  denied = "warn",
  unavailable = "warn",
}

--- Splits an http(s) URL into scheme, host, port and path.
function M.parse_url(url)
  local scheme, rest = tostring(url or ""):match("^(https?)://(.+)$")
  if not scheme then
    return nil
  end
  local hostport, path = rest:match("^([^/]+)(.*)$")
  if not hostport then
    return nil
  end
  hostport = hostport:gsub("^.*@", "") -- never credentials
  local host, port = hostport:match("^%[(.+)%]:?(%d*)$")
  if not host then
    host, port = hostport:match("^([^:]+):?(%d*)$")
  end
  port = tonumber(port) or (scheme == "https" and 443 or 80)
  return { scheme = scheme, host = host, port = port, path = path:gsub("/$", "") }
end

--- What an HTTP status to GET <base>/models says about the service: ok (it is there; a 401 or
--- 403 too, as the probe sends no key), and what was found. A 404 is no service at that address
--- (a wrong path, often a missing /v1), a 5xx a service that fails.
function M.judge(code, base_url)
  if code == 404 then
    return false, ("answered HTTP 404: there is no model service at %s/models (is the address right? it usually ends in /v1)"):format(base_url:gsub("/$", ""))
  elseif code >= 500 then
    return false, ("answered HTTP %d: the service fails"):format(code)
  end
  return true, ("answered HTTP %d"):format(code)
end

--- Whether the model service at base_url answers: an HTTP answer to GET <base>/models (sent
--- without a key: a 401 still says the service is up; see M.judge) for http, a TCP connection
--- for https (curl, when installed, makes it an HTTPS request). Blocks for at most timeout_ms.
--- Returns ok, and what was found.
function M.probe(base_url, timeout_ms)
  timeout_ms = timeout_ms or 5000
  local u = M.parse_url(base_url)
  if not u then
    return false, "cannot read the address " .. tostring(base_url)
  end
  if u.scheme == "https" and vim.fn.executable("curl") == 1 then
    local res = vim.system({
      "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", tostring(math.ceil(timeout_ms / 1000)),
      base_url:gsub("/$", "") .. "/models",
    }, { text = true }):wait(timeout_ms + 1000)
    local code = tonumber(vim.trim(res.stdout or ""))
    if res.code == 0 and code and code > 0 then
      return M.judge(code, base_url)
    end
    return false, vim.trim(res.stderr or "") ~= "" and vim.trim(res.stderr) or ("curl exited with " .. tostring(res.code))
  end
  local done, ok, what = false, false, nil
  local tcp = vim.uv.new_tcp()
  local function finish(o, w)
    if done then
      return
    end
    done, ok, what = true, o, w
    if not tcp:is_closing() then
      tcp:close()
    end
  end
  vim.uv.getaddrinfo(u.host, tostring(u.port), { socktype = "stream" }, function(err, addrs)
    if err or not addrs or not addrs[1] then
      return finish(false, "cannot resolve " .. u.host .. (err and (": " .. err) or ""))
    end
    tcp:connect(addrs[1].addr, addrs[1].port, function(cerr)
      if cerr then
        return finish(false, ("cannot connect to %s:%d: %s"):format(u.host, u.port, cerr))
      end
      if u.scheme == "https" then
        return finish(true, ("accepts connections on %s:%d"):format(u.host, u.port))
      end
      local buf = ""
      tcp:read_start(function(rerr, data)
        if rerr then
          return finish(false, "reading the answer: " .. rerr)
        end
        if data then
          buf = buf .. data
        end
        local status = buf:match("^HTTP/%d[%.%d]* (%d%d%d)")
        if status then
          return finish(M.judge(tonumber(status), base_url))
        end
        if not data then
          return finish(false, "closed the connection without an HTTP answer")
        end
      end)
      tcp:write(("GET %s/models HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n"):format(u.path, u.host))
    end)
  end)
  vim.wait(timeout_ms, function()
    return done
  end, 10)
  if not done then
    finish(false, ("no answer within %d ms"):format(timeout_ms))
  end
  return ok, what
end

function M.check()
  h.start("kin: binary")
  local build = require("kin.build")
  if build.running() then
    h.info(build.progress() .. "; run :checkhealth kin again once it is done")
    return
  end
  local cmd = config.cmd()
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    local need, cannot = build.needed()
    if need and not cannot then
      h.error("kin is not built yet" .. (build.state.error and (": the last build failed: " .. build.state.error) or ""), {
        "Run :KinBuild (in a shell: " .. build.shell_step() .. "); the first :KinChat builds it too",
        "Or set `cmd` to a kin you installed: require('kin').setup({ cmd = { '/path/to/kin', 'serve' } })",
      })
    elseif need then
      h.error(cannot)
    else
      h.error(("`%s` is not executable or not in PATH"):format(exe), {
        "Set `cmd` to a kin that runs: require('kin').setup({ cmd = { '/path/to/kin', 'serve' } })",
      })
    end
    return
  end
  h.ok("found " .. vim.fn.exepath(exe))
  local ok, res = pcall(function()
    return vim.system({ exe, "version" }, { text = true }):wait(5000)
  end)
  if ok and res and res.code == 0 then
    h.ok("version: " .. vim.trim(res.stdout or ""))
  else
    h.warn(("`%s version` failed: %s"):format(exe, ok and vim.trim((res and res.stderr) or "") or tostring(res)))
  end

  h.start("kin: service")
  if not service.wait_ready(10000) then
    h.error("`" .. table.concat(service.command(), " ") .. "` did not start or answer initialize", {
      "Run :KinLog to read its log",
    })
    return
  end
  local init = service.ctx.init or {}
  local pv = init.protocolVersion
  if pv == "1" then
    h.ok(("kin serve %s speaks protocol %s"):format(init.serverInfo and init.serverInfo.version or "?", pv))
  else
    h.warn(("protocol version %s; kin.nvim is written for version 1"):format(tostring(pv)))
  end
  local folders = init.workspaceFolders or {}
  if #folders > 0 then
    h.info("workspace: " .. table.concat(folders, ", "))
  end
  local log = config.log_file()
  if log then
    h.info("log file: " .. log)
  end

  h.start("kin: model")
  local model = init.model or {}
  if model.configured then
    h.ok(("configured: model %s at %s (API key present)"):format(tostring(model.model), tostring(model.baseUrl or "?")))
    if model.baseUrl then
      local up, what = M.probe(model.baseUrl, 5000)
      if up then
        h.ok(("the model service at %s answers (%s)"):format(model.baseUrl, what))
      else
        h.error(("the model service at %s does not answer: %s"):format(model.baseUrl, what), {
          "Start the service, or fix OPENAI_BASE_URL (settings.json's baseUrl) if it points to the wrong place",
        })
      end
    end
  else
    h.error("the model service is not configured: " .. tostring(model.missing or "no model information"), {
      "Set OPENAI_API_KEY (and OPENAI_BASE_URL for a service other than OpenAI's) in the environment or in setup({ env = ... })",
    })
  end

  h.start("kin: command sandbox")
  local sb = init.sandbox
  if type(sb) ~= "table" then
    h.info("this kin does not report a command sandbox")
  elseif sb.confined then
    h.ok(("commands run confined (%s)"):format(tostring(sb.mechanism)))
  else
    local advice = (sb.hint and sb.hint ~= "") and { sb.hint } or nil
    local reason = tostring(sb.reason or "no reason given")
    if sb.mode == "required" then
      h.error("commands will not run: settings.json requires a sandbox, and " .. reason, advice)
    elseif sb.mode == "off" then
      h.warn("commands run unconfined: " .. reason)
    else
      h.warn("commands run unconfined: " .. reason, advice)
    end
  end

  h.start("kin: MCP servers")
  if init.capabilities and init.capabilities.mcp == false then
    h.info("this kin build has no MCP support (initialize: capabilities.mcp = false)")
    return
  end
  local err, result = service.request_sync("mcp/list", {}, 10000)
  if err then
    h.warn("mcp/list failed: " .. tostring(err.message))
    return
  end
  local servers = result.servers or {}
  if #servers == 0 then
    h.info("no MCP servers configured (:KinMcp adds one)")
  end
  for _, s in ipairs(servers) do
    local live = service.ctx.mcp[s.name]
    local state = (live and live.state) or s.state or "?"
    local tools = (live and live.tools) or s.tools or 0
    local msg = ("%s [%s, %s]: %s, %d tools"):format(s.name, s.scope or "?", s.transport or "?", state, tools)
    local lasterr = (live and live.error) or s.lastError
    if lasterr and lasterr ~= "" then
      msg = msg .. " — " .. lasterr
    end
    local level = mcp_levels[state] or "warn"
    if level == "warn" then
      local advice = {
        awaiting_trust = "approve its launch when kin asks, or :KinMcp → Apply",
        needs_login = ":KinMcp → " .. s.name .. " → Sign in",
        denied = "its launch was denied; :KinMcp → Apply asks again",
        unavailable = ":KinMcp → " .. s.name .. " → Check",
      }
      h.warn(msg, advice[state] and { advice[state] } or nil)
    elseif level == "ok" then
      h.ok(msg)
    else
      h.info(msg)
    end
  end
  for _, f in ipairs(result.foreign or {}) do
    h.warn(("%s in %s is not loaded"):format(f.name, f.file or "?"), { ":KinMcp → " .. f.name .. " → Adopt" })
  end
  for _, w in ipairs(result.warnings or {}) do
    h.warn(M.warning_text(w))
  end
end

return M
