-- :KinMcp — a vim.ui.select manager over mcp/list: add, edit, enable/disable, remove, adopt,
-- check, apply and sign in. kin owns the files; this only asks and sends the requests.
local service = require("kin.service")
local float = require("kin.float")
local mcpinstr = require("kin.mcpinstr")

local M = {}

local function notify(msg, level)
  service.notify(msg, level)
end

local function select(items, opts, cb)
  vim.ui.select(items, opts, cb)
end

local function input(opts, cb)
  vim.ui.input(opts, cb)
end

--- Secret values (env, headers) are typed without echo.
function M.secret(prompt)
  local ok, v = pcall(vim.fn.inputsecret, prompt)
  return ok and v or ""
end

--- Splits a command line into words, honouring '...', "..." and backslash escapes.
function M.split_args(s)
  local out, cur, quote, esc, has = {}, {}, nil, false, false
  for ch in s:gmatch(".") do
    if esc then
      cur[#cur + 1], esc, has = ch, false, true
    elseif ch == "\\" and quote ~= "'" then
      esc = true
    elseif quote then
      if ch == quote then
        quote = nil
      else
        cur[#cur + 1] = ch
      end
    elseif ch == "'" or ch == '"' then
      quote, has = ch, true
    elseif ch:match("%s") then
      if has or #cur > 0 then
        out[#out + 1] = table.concat(cur)
        cur, has = {}, false
      end
    else
      cur[#cur + 1], has = ch, true
    end
  end
  if has or #cur > 0 then
    out[#out + 1] = table.concat(cur)
  end
  return out
end

--- A config warning: one line as kin sends it ("<file>: server "x" skipped: <why>").
function M.warning_text(w)
  return tostring(w)
end

local function state_text(row)
  local live = service.ctx.mcp[row.name]
  local state = (live and live.state) or row.state or "?"
  local tools = (live and live.tools) or row.tools
  local s = state
  if tools and tools > 0 then
    s = s .. (" (%d tools)"):format(tools)
  end
  if row.enabled == false and state ~= "disabled" then
    s = s .. ", disabled"
  end
  return s
end

function M.format_row(item)
  if item.kind == "server" then
    local r = item.row
    return ("%s  [%s, %s]  %s"):format(r.name, r.scope or "?", r.transport or "?", state_text(r)) .. mcpinstr.badge(r)
  elseif item.kind == "foreign" then
    local r = item.row
    return ("%s  [foreign: %s]  not loaded: adopt it into .kin/mcp.json"):format(r.name, r.file or "?")
  elseif item.kind == "shadowed" then
    local r = item.row
    return ("%s  [%s]  hidden by the project entry of the same name"):format(r.name, r.scope or "?")
  end
  return item.label
end

-- Asks key/value pairs until an empty key; values are typed as secrets.
local function ask_pairs(what, prefill, cb)
  local out = {}
  local keys = vim.deepcopy(prefill or {})
  local function next_key()
    local key = table.remove(keys, 1)
    if key then
      local v = M.secret(("%s %s value (empty removes it; ${VAR} refers to a variable): "):format(what, key))
      if v ~= "" then
        out[key] = v
      end
      return next_key()
    end
    input({ prompt = ("%s name (empty to finish): "):format(what) }, function(name)
      if name == nil then
        return cb(nil)
      end
      name = vim.trim(name)
      if name == "" then
        return cb(out)
      end
      local v = M.secret(("%s %s value: "):format(what, name))
      out[name] = v
      vim.schedule(next_key)
    end)
  end
  next_key()
end

-- Asks the launch of a server; cb(config) or cb(nil) when dismissed.
local function ask_launch(transport, defaults, cb)
  defaults = defaults or {}
  if transport == "http" then
    input({ prompt = "URL: ", default = defaults.url }, function(url)
      if not url or vim.trim(url) == "" then
        return cb(nil)
      end
      ask_pairs("Header", defaults.header_keys, function(headers)
        if not headers then
          return cb(nil)
        end
        local cfg = { type = "http", url = vim.trim(url) }
        if next(headers) then
          cfg.headers = headers
        end
        cb(cfg)
      end)
    end)
    return
  end
  input({ prompt = "Command and arguments: ", default = defaults.launch }, function(line)
    if not line or vim.trim(line) == "" then
      return cb(nil)
    end
    local words = M.split_args(line)
    ask_pairs("Environment variable", defaults.env_keys, function(env)
      if not env then
        return cb(nil)
      end
      local cfg = { command = words[1] }
      if #words > 1 then
        cfg.args = vim.list_slice(words, 2)
      end
      if next(env) then
        cfg.env = env
      end
      cb(cfg)
    end)
  end)
end

--- Guided add: name, scope, transport, launch, env/headers; then mcp/add.
function M.add(cb)
  input({ prompt = "MCP server name: " }, function(name)
    if not name or vim.trim(name) == "" then
      return
    end
    name = vim.trim(name)
    local scopes = {
      { id = "project", label = "project: .kin/mcp.json in this workspace" },
      { id = "global", label = "global: mcp.json in KIN_HOME, for every workspace" },
    }
    select(scopes, {
      prompt = "Scope of " .. name,
      format_item = function(s)
        return s.label
      end,
    }, function(scope)
      if not scope then
        return
      end
      select({ "stdio", "http" }, { prompt = "Transport" }, function(transport)
        if not transport then
          return
        end
        ask_launch(transport, nil, function(cfg)
          if not cfg then
            return
          end
          service.request("mcp/add", { scope = scope.id, name = name, config = cfg }, function()
            notify(("added MCP server %s (%s); apply to connect it"):format(name, scope.id))
            if cb then
              cb(name, scope.id)
            end
          end)
        end)
      end)
    end)
  end)
end

--- Names of masked entries: kin sends lists ("KEY=●●●●", "Name: ●●●●"); a map is accepted too.
local function masked_names(entries, sep)
  local names = {}
  if vim.islist(entries or {}) then
    for _, e in ipairs(entries or {}) do
      local name = vim.trim((tostring(e):match("^([^" .. sep .. "]+)" .. sep) or tostring(e)))
      table.insert(names, name)
    end
  else
    names = vim.tbl_keys(entries)
  end
  return names
end
M._masked_names = masked_names

--- Edit: the launch is asked again with the current values; masked secrets are asked again.
function M.edit(row, cb)
  local defaults = {
    launch = row.transport ~= "http" and row.launch or nil,
    url = row.transport == "http" and row.launch or nil,
    env_keys = masked_names(row.env, "="),
    header_keys = masked_names(row.headers, ":"),
  }
  table.sort(defaults.env_keys)
  table.sort(defaults.header_keys)
  ask_launch(row.transport == "http" and "http" or "stdio", defaults, function(cfg)
    if not cfg then
      return
    end
    if row.enabled == false then
      cfg.disabled = true
    end
    service.request("mcp/update", { scope = row.scope, name = row.name, config = cfg }, function()
      notify(("updated MCP server %s; apply to reconnect it"):format(row.name))
      if cb then
        cb()
      end
    end)
  end)
end

--- mcp/check, shown in a float.
function M.check(name)
  service.request("mcp/check", name and { name = name } or {}, function(result)
    local lines = {}
    for _, r in ipairs(result.results or {}) do
      lines[#lines + 1] = ("%s %s: %s%s"):format(
        r.ready and "✓" or "✗",
        r.name,
        r.state or (r.ready and "ready" or "not ready"),
        r.explanation and r.explanation ~= "" and (" — " .. r.explanation) or ""
      )
    end
    if #lines == 0 then
      lines = { "no MCP servers configured" }
    end
    M.last_check = float.open(lines, { title = "kin: MCP check", enter = true })
  end)
end

--- mcp/apply: makes the live service match the files.
function M.apply(cb)
  service.request("mcp/apply", {}, function(result)
    local parts = {}
    for _, s in ipairs(result.servers or {}) do
      parts[#parts + 1] = ("%s: %s"):format(s.name, s.state)
    end
    notify("MCP applied" .. (#parts > 0 and (": " .. table.concat(parts, ", ")) or ""))
    if cb then
      cb(result)
    end
  end)
end

local function server_actions(row)
  local actions = {}
  actions[#actions + 1] = { id = "toggle", label = row.enabled == false and "Enable" or "Disable" }
  actions[#actions + 1] = { id = "edit", label = "Edit" }
  actions[#actions + 1] = { id = "check", label = "Check" }
  if row.instructions then
    actions[#actions + 1] = { id = "instructions", label = row.instructionsPending and "Instructions (changed: review and accept)" or "Instructions" }
  end
  if row.transport == "http" then
    actions[#actions + 1] = { id = "login", label = "Sign in" }
  end
  actions[#actions + 1] = { id = "remove", label = "Remove" }
  select(actions, {
    prompt = ("%s [%s]: %s"):format(row.name, row.scope or "?", state_text(row)),
    format_item = function(a)
      return a.label
    end,
  }, function(a)
    if not a then
      return
    end
    if a.id == "toggle" then
      local enabled = row.enabled == false
      service.request("mcp/setEnabled", { scope = row.scope, name = row.name, enabled = enabled }, function()
        notify(("%s %s; apply to make it live"):format(row.name, enabled and "enabled" or "disabled"))
      end)
    elseif a.id == "edit" then
      M.edit(row)
    elseif a.id == "check" then
      M.check(row.name)
    elseif a.id == "instructions" then
      mcpinstr.show(row)
    elseif a.id == "login" then
      notify("signing in to " .. row.name .. "…")
      service.request("mcp/login", { name = row.name }, function(result)
        notify(("%s: %s"):format(row.name, result and result.state or "done"))
      end)
    elseif a.id == "remove" then
      select({ "Remove " .. row.name, "Cancel" }, { prompt = "Remove MCP server " .. row.name .. "?" }, function(c)
        if c and c ~= "Cancel" then
          service.request("mcp/remove", { scope = row.scope, name = row.name }, function()
            notify("removed " .. row.name .. "; apply to stop it")
          end)
        end
      end)
    end
  end)
end

--- The manager's rows for an mcp/list result: the servers, the global entries a project entry
--- hides, the foreign ones (adoptable), then the actions.
function M.items(result)
  local items = {}
  for _, r in ipairs(result.servers or {}) do
    items[#items + 1] = { kind = "server", row = r }
  end
  for _, r in ipairs(result.shadowed or {}) do
    items[#items + 1] = { kind = "shadowed", row = r }
  end
  for _, r in ipairs(result.foreign or {}) do
    items[#items + 1] = { kind = "foreign", row = r }
  end
  items[#items + 1] = { kind = "add", label = "+ Add a server" }
  items[#items + 1] = { kind = "apply", label = "Apply changes (reconnect from the files)" }
  items[#items + 1] = { kind = "check", label = "Check every server" }
  return items
end

--- The manager menu.
function M.open()
  service.request("mcp/list", {}, function(result)
    local items = M.items(result)
    for _, n in ipairs(result.notices or {}) do
      notify(n, vim.log.levels.INFO)
    end
    for _, w in ipairs(result.warnings or {}) do
      notify(M.warning_text(w), vim.log.levels.WARN)
    end
    select(items, { prompt = "kin: MCP servers", format_item = M.format_row, kind = "kin.mcp" }, function(item)
      if not item then
        return
      end
      if item.kind == "server" then
        server_actions(item.row)
      elseif item.kind == "foreign" then
        select({ "Adopt " .. item.row.name, "Cancel" }, {
          prompt = ("Copy %s from %s into .kin/mcp.json (it is not trusted until you approve it)"):format(
            item.row.name,
            item.row.file or "?"
          ),
        }, function(c)
          if c and c ~= "Cancel" then
            service.request("mcp/adopt", { name = item.row.name }, function()
              notify("adopted " .. item.row.name .. "; apply to connect it")
            end)
          end
        end)
      elseif item.kind == "add" then
        M.add()
      elseif item.kind == "apply" then
        M.apply()
      elseif item.kind == "check" then
        M.check(nil)
      end
    end)
  end)
end

return M
