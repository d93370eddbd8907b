-- elicitation/request: an MCP server asks the person something. Form mode asks field by field
-- (vim.ui.input; vim.ui.select for a choice and booleans; for a multi-select, a vim.ui.select
-- whose picks toggle options until "Done"), options titled as kin sent them; dismissing any field
-- declines the whole request, so nothing partial is ever sent. URL mode shows the URL and opens it
-- only after the person consents. kin checks every answer again.
local service = require("kin.service")
local prompts = require("kin.prompts")

local M = {}

local function respond(p, action, content)
  if prompts.is_resolved(p.requestId) then
    return
  end
  local params = { requestId = p.requestId, action = action }
  if action == "accept" and p.mode ~= "url" then
    params.content = (content and next(content)) and content or vim.empty_dict()
  end
  service.request("elicitation/respond", params, nil, function(err)
    if err.code ~= -32013 then
      service.notify("elicitation/respond failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end
  end)
end

local FORMAT_HINT = {
  email = "an email address",
  uri = "a URI",
  date = "YYYY-MM-DD",
  ["date-time"] = "e.g. 2026-11-30T23:15:00Z",
}

local function count_hint(f)
  if f.minItems and f.maxItems then
    return ("%d–%d choices"):format(f.minItems, f.maxItems)
  elseif f.minItems then
    return ("at least %d"):format(f.minItems)
  elseif f.maxItems then
    return ("at most %d"):format(f.maxItems)
  end
end

--- The prompt of one field: which server asks, its message, the field's title and limits.
--- Who asks: kin itself (its ask tool, `source` "kin") or the MCP server.
function M.asker(p)
  if p.source == "kin" then
    return "kin"
  end
  return p.server or "mcp"
end

function M.field_prompt(p, f)
  local title = f.title or f.name
  local extra = {}
  if f.type == "string" and f.format and FORMAT_HINT[f.format] then
    extra[#extra + 1] = FORMAT_HINT[f.format]
  elseif f.type == "multi_select" and count_hint(f) then
    extra[#extra + 1] = count_hint(f)
  end
  if f.type == "integer" or f.type == "number" then
    if f.minimum and f.maximum then
      extra[#extra + 1] = ("%s–%s"):format(f.minimum, f.maximum)
    elseif f.minimum then
      extra[#extra + 1] = (">= %s"):format(f.minimum)
    elseif f.maximum then
      extra[#extra + 1] = ("<= %s"):format(f.maximum)
    else
      extra[#extra + 1] = f.type
    end
  end
  if not f.required then
    extra[#extra + 1] = "optional"
  end
  local suffix = #extra > 0 and (" (" .. table.concat(extra, ", ") .. ")") or ""
  local msg = p.message and p.message ~= "" and (p.message .. " › ") or ""
  return ("[%s] %s%s%s: "):format(M.asker(p), msg, title, suffix)
end

--- The options of an enum or multi_select field: { value, label } with kin's titles.
function M.choice_items(f)
  local items = {}
  for i, v in ipairs(f.enum or {}) do
    local name = f.enumNames and f.enumNames[i]
    items[#items + 1] = { value = v, label = (name and name ~= "") and name or tostring(v) }
  end
  return items
end

--- Checks a multi-select's picks; returns an error or nil.
function M.validate_choices(f, values)
  local title = f.title or f.name
  if f.minItems and #values < f.minItems then
    return ("%s needs at least %d choices"):format(title, f.minItems)
  end
  if f.maxItems and #values > f.maxItems then
    return ("%s allows at most %d choices"):format(title, f.maxItems)
  end
end

-- A multi-select: each pick toggles an option ([x]/[ ]), "Done" sends the chosen ones in kin's
-- order. The default is chosen to begin with; dismissing declines the whole request.
function M.ask_choices(p, f, prompt, cb)
  local chosen = {}
  for _, v in ipairs(type(f.default) == "table" and f.default or {}) do
    chosen[v] = true
  end
  local function ask()
    local items = {}
    for _, it in ipairs(M.choice_items(f)) do
      items[#items + 1] = { value = it.value, label = (chosen[it.value] and "[x] " or "[ ] ") .. it.label }
    end
    local n = 0
    for _ in pairs(chosen) do
      n = n + 1
    end
    items[#items + 1] = { done = true, label = ("Done (%d chosen)"):format(n) }
    vim.ui.select(items, {
      prompt = prompt,
      kind = "kin.elicitation.multi",
      format_item = function(it)
        return it.label
      end,
    }, function(choice)
      if not choice then
        return cb(false)
      end
      if not choice.done then
        chosen[choice.value] = not chosen[choice.value] or nil
        return vim.schedule(ask)
      end
      local values = {}
      for _, v in ipairs(f.enum or {}) do
        if chosen[v] then
          values[#values + 1] = v
        end
      end
      if #values == 0 and not f.required then
        return cb(true, nil)
      end
      local err = M.validate_choices(f, values)
      if err then
        vim.notify(err, vim.log.levels.WARN, { title = "kin" })
        return vim.schedule(ask)
      end
      cb(true, values)
    end)
  end
  ask()
end

local FORMAT_CHECK = {
  email = function(t)
    return t:match("^[^@%s<>]+@[^@%s<>]+$") ~= nil
  end,
  uri = function(t)
    return t:match("^%a[%w+.-]*:%S+$") ~= nil
  end,
  date = function(t)
    return t:match("^%d%d%d%d%-%d%d%-%d%d$") ~= nil
  end,
  ["date-time"] = function(t)
    return t:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d") ~= nil and (t:match("Z$") or t:match("[+-]%d%d:%d%d$")) ~= nil
  end,
}

--- Checks a typed value against its field; returns the value to send (nil to omit) or an error.
function M.validate(f, text)
  if text == "" then
    if f.required then
      return nil, (f.title or f.name) .. " is required"
    end
    return nil
  end
  if f.type == "integer" or f.type == "number" then
    local n = tonumber(text)
    if not n then
      return nil, ("%s must be a number"):format(f.title or f.name)
    end
    if f.type == "integer" and n ~= math.floor(n) then
      return nil, ("%s must be a whole number"):format(f.title or f.name)
    end
    if f.minimum and n < f.minimum then
      return nil, ("%s must be at least %s"):format(f.title or f.name, f.minimum)
    end
    if f.maximum and n > f.maximum then
      return nil, ("%s must be at most %s"):format(f.title or f.name, f.maximum)
    end
    if f.type == "integer" then
      n = math.floor(n)
    end
    return n
  end
  if f.minLength and vim.fn.strchars(text) < f.minLength then
    return nil, ("%s needs at least %d characters"):format(f.title or f.name, f.minLength)
  end
  if f.maxLength and vim.fn.strchars(text) > f.maxLength then
    return nil, ("%s allows at most %d characters"):format(f.title or f.name, f.maxLength)
  end
  local check = f.format and FORMAT_CHECK[f.format]
  if check and not check(text) then
    return nil, ("%s must be %s"):format(f.title or f.name, FORMAT_HINT[f.format])
  end
  return text
end

-- Asks one field; cb(ok, value): ok false means the person dismissed it.
local function ask_field(p, f, cb)
  local prompt = M.field_prompt(p, f)
  if f.type == "multi_select" then
    return M.ask_choices(p, f, prompt, cb)
  end
  if f.enum then
    local items = M.choice_items(f)
    if not f.required then
      items[#items + 1] = { skip = true, label = "(leave empty)" }
    end
    vim.ui.select(items, {
      prompt = prompt,
      kind = "kin.elicitation",
      format_item = function(it)
        return it.label
      end,
    }, function(choice)
      if not choice then
        return cb(false)
      end
      cb(true, not choice.skip and choice.value or nil)
    end)
    return
  end
  if f.type == "boolean" then
    local items = { "Yes", "No" }
    vim.ui.select(items, { prompt = prompt, kind = "kin.elicitation" }, function(choice)
      if not choice then
        return cb(false)
      end
      cb(true, choice == "Yes")
    end)
    return
  end
  local function ask()
    vim.ui.input({
      prompt = prompt,
      default = f.default ~= nil and tostring(f.default) or nil,
    }, function(text)
      if text == nil then
        return cb(false)
      end
      local value, err = M.validate(f, text)
      if err then
        vim.notify(err, vim.log.levels.WARN, { title = "kin" })
        return vim.schedule(ask)
      end
      cb(true, value)
    end)
  end
  ask()
end

local function form(p, done)
  local fields = p.fields or {}
  local content = {}
  local i = 0
  local function step()
    if prompts.is_resolved(p.requestId) then
      return done()
    end
    i = i + 1
    local f = fields[i]
    if not f then
      respond(p, "accept", content)
      return done()
    end
    ask_field(p, f, function(ok, value)
      if not ok then
        respond(p, "decline")
        return done()
      end
      if value ~= nil then
        content[f.name] = value
      end
      vim.schedule(step)
    end)
  end
  step()
end

local function url(p, done)
  local prompt = ("[%s] %s\n%s"):format(p.server or "mcp", p.message or "Open this address?", p.url or "")
  vim.ui.select({ "Open in browser", "Cancel" }, { prompt = prompt, kind = "kin.elicitation.url" }, function(choice)
    if choice == "Open in browser" then
      local ok, err = pcall(vim.ui.open, p.url)
      if not ok then
        service.notify("cannot open " .. tostring(p.url) .. ": " .. tostring(err), vim.log.levels.ERROR)
      end
      respond(p, "accept")
    else
      respond(p, "decline")
    end
    done()
  end)
end

--- elicitation/request notification.
function M.request(p)
  prompts.push(p.requestId, function(done)
    if p.mode == "url" then
      url(p, done)
    else
      form(p, done)
    end
  end)
end

--- elicitation/resolved notification.
function M.resolved(p)
  prompts.resolve(p.requestId)
end

return M
