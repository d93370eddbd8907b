-- elicitation/request: an MCP server asks the person something. Form mode asks field by field
-- (vim.ui.input, or vim.ui.select for enums and booleans); dismissing any field declines the
-- whole request, so nothing partial is ever sent. URL mode shows the URL and opens it only after
-- the person consents.
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

local function field_prompt(p, f)
  local title = f.title or f.name
  local extra = {}
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
  return ("[%s] %s%s%s: "):format(p.server or "mcp", msg, title, suffix)
end

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
  if f.minLength and #text < f.minLength then
    return nil, ("%s needs at least %d characters"):format(f.title or f.name, f.minLength)
  end
  if f.maxLength and #text > f.maxLength then
    return nil, ("%s allows at most %d characters"):format(f.title or f.name, f.maxLength)
  end
  return text
end

-- Asks one field; cb(ok, value): ok false means the person dismissed it.
local function ask_field(p, f, cb)
  local prompt = field_prompt(p, f)
  if f.enum then
    local items = {}
    for i, v in ipairs(f.enum) do
      items[#items + 1] = { value = v, label = (f.enumNames and f.enumNames[i]) or tostring(v) }
    end
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
