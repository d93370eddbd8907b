-- elicitation/request: an MCP server (or kin's own `ask` tool) asks the person something. The
-- question first appears in kin's window (kin.panel), which takes no focus: only an explicit key
-- there starts answering, so typing elsewhere never becomes an answer. Form mode then asks field
-- by field (vim.ui.input; vim.ui.select for a choice and booleans; for a multi-select, a
-- vim.ui.select whose picks toggle options until "Done"), options titled as kin sent them;
-- dismissing any field declines the whole request, so nothing partial is ever sent. A picker that
-- never calls back holds nothing up: the question stays in kin's window, to be answered again or
-- declined. URL mode shows the URL and opens it only after the person consents, and says "accept"
-- only when it really opened. kin checks every answer again.
local service = require("kin.service")
local prompts = require("kin.prompts")

local M = {}

local function respond(p, action, content)
  local params = { requestId = p.requestId, action = action }
  if action == "accept" and p.mode ~= "url" then
    params.content = (content and next(content)) and content or vim.empty_dict()
  end
  prompts.answer(p.requestId, "elicitation/respond", params, function()
    M.request(p) -- kin keeps it open for a corrected answer
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

-- vim.ui.select over { label, ... } items: picked(item) gets the choice; dismissing it is
-- cb(false), which declines the whole request.
local function select_item(items, prompt, kind, cb, picked)
  vim.ui.select(items, {
    prompt = prompt,
    kind = kind,
    format_item = function(it)
      return it.label
    end,
  }, function(choice)
    if not choice then
      return cb(false)
    end
    picked(choice)
  end)
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
    select_item(items, prompt, "kin.elicitation.multi", cb, function(choice)
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
        service.notify(err, vim.log.levels.WARN)
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
  local title = f.title or f.name
  if text == "" then
    if f.required then
      return nil, title .. " is required"
    end
    return nil
  end
  if f.type == "integer" or f.type == "number" then
    local n = tonumber(text)
    if not n then
      return nil, ("%s must be a number"):format(title)
    end
    if f.type == "integer" and n ~= math.floor(n) then
      return nil, ("%s must be a whole number"):format(title)
    end
    if f.minimum and n < f.minimum then
      return nil, ("%s must be at least %s"):format(title, f.minimum)
    end
    if f.maximum and n > f.maximum then
      return nil, ("%s must be at most %s"):format(title, f.maximum)
    end
    if f.type == "integer" then
      n = math.floor(n)
    end
    return n
  end
  if f.minLength and vim.fn.strchars(text) < f.minLength then
    return nil, ("%s needs at least %d characters"):format(title, f.minLength)
  end
  if f.maxLength and vim.fn.strchars(text) > f.maxLength then
    return nil, ("%s allows at most %d characters"):format(title, f.maxLength)
  end
  local check = f.format and FORMAT_CHECK[f.format]
  if check and not check(text) then
    return nil, ("%s must be %s"):format(title, FORMAT_HINT[f.format])
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
    return select_item(items, prompt, "kin.elicitation", cb, function(choice)
      cb(true, not choice.skip and choice.value or nil)
    end)
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
        service.notify(err, vim.log.levels.WARN)
        return vim.schedule(ask)
      end
      cb(true, value)
    end)
  end
  ask()
end

local function field_summary(f)
  local kind = ({
    string = "text",
    integer = "a whole number",
    number = "a number",
    boolean = "yes or no",
    enum = "one choice",
    multi_select = "choices",
  })[f.type] or tostring(f.type)
  local bits = { kind }
  if f.required then
    bits[#bits + 1] = "required"
  end
  if f.enum then
    local labels = {}
    for _, it in ipairs(M.choice_items(f)) do
      labels[#labels + 1] = it.label
    end
    bits[#bits + 1] = table.concat(labels, " / ")
  end
  if f.default ~= nil then
    bits[#bits + 1] = "default " .. (type(f.default) == "table" and table.concat(f.default, ", ") or tostring(f.default))
  end
  return ("  - %s (%s)"):format(f.title or f.name, table.concat(bits, "; "))
end

-- Asks the form's fields one by one, starting over on each call: a callback of an earlier
-- round (a picker that came back late) is ignored.
local function answer_form(item)
  local p = item.params
  item.state.round = (item.state.round or 0) + 1
  local round = item.state.round
  local function current()
    return item.state.round == round and not prompts.is_resolved(p.requestId)
  end
  local fields = p.fields or {}
  local content = {}
  local i = 0
  local function step()
    if not current() then
      return
    end
    i = i + 1
    local f = fields[i]
    if not f then
      return respond(p, "accept", content)
    end
    ask_field(p, f, function(ok, value)
      if not current() then
        return
      end
      if not ok then
        return respond(p, "decline")
      end
      if value ~= nil then
        content[f.name] = value
      end
      vim.schedule(step)
    end)
  end
  step()
end

--- Opens an address with vim.ui.open (or setup's `open_url`); cb(ok, err) says whether it
--- really opened: no opener, or an opener that fails within a few seconds, is a failure.
function M.open_url(url, cb)
  local custom = require("kin.config").options.open_url
  if custom then
    local ok, res, err = pcall(custom, url)
    if not ok then
      return cb(false, tostring(res))
    end
    return cb(res ~= false and res ~= nil, err)
  end
  local ok, obj, err = pcall(vim.ui.open, url)
  if not ok then
    return cb(false, tostring(obj))
  end
  if not obj then
    return cb(false, err or "vim.ui.open found no way to open it")
  end
  -- Openers (xdg-open, open) exit once the browser has it; one still running after a few
  -- seconds is taken as opened.
  local timer = vim.uv.new_timer()
  local waited = 0
  timer:start(50, 50, vim.schedule_wrap(function()
    waited = waited + 50
    local closing = obj.is_closing and obj:is_closing()
    if not closing and waited < 5000 then
      return
    end
    timer:stop()
    timer:close()
    if not closing then
      return cb(true)
    end
    local res = obj:wait(0)
    if res and res.code == 0 then
      cb(true)
    else
      cb(false, ("the opener exited with code %s%s"):format(
        tostring(res and res.code),
        res and res.stderr and res.stderr ~= "" and (": " .. vim.trim(res.stderr)) or ""
      ))
    end
  end))
end

local function open_in_browser(item)
  local p = item.params
  item.state.opening = true
  item.state.error = nil
  prompts.update(p.requestId)
  M.open_url(p.url, function(ok, err)
    item.state.opening = false
    if prompts.is_resolved(p.requestId) then
      return
    end
    if ok then
      return respond(p, "accept")
    end
    -- Not opened: say so, and leave the question open (never report it as accepted).
    item.state.error = err or "it did not open"
    service.notify("cannot open " .. tostring(p.url) .. ": " .. item.state.error, vim.log.levels.ERROR)
    prompts.update(p.requestId)
  end)
end

local function copy_address(url)
  vim.fn.setreg('"', url)
  pcall(vim.fn.setreg, "+", url)
  service.notify("copied " .. url)
end

--- The panel view of a request.
---@return kin.PanelView
function M.view(item)
  local p = item.params
  local body = require("kin.panel").body()
  local add = body.add
  local choices
  local extra
  if p.mode == "url" then
    add(("# %s asks you to open an address"):format(M.asker(p)), "KinTitle")
    add("")
    add(p.message or "Open this address?")
    add("")
    add(p.url or "")
    add("")
    add("kin never opens it itself: it opens only when you choose Open in browser.", "KinMeta")
    if item.state.opening then
      add("")
      add("Opening…", "KinMeta")
    elseif item.state.error then
      add("")
      add("It did not open: " .. item.state.error, "KinWarning")
      add("Copy it with y, open it yourself, then choose I opened it myself.", "KinWarning")
    end
    choices = {
      { key = "o", label = "Open in browser", pick = function()
        open_in_browser(item)
      end },
      { key = "a", label = "I opened it myself", pick = function()
        respond(p, "accept")
      end },
      { key = "d", label = "Decline", deny = true, pick = function()
        respond(p, "decline")
      end },
    }
    extra = { y = { desc = "copy the address", fn = function()
      copy_address(p.url or "")
    end } }
  else
    add(("# %s asks%s"):format(M.asker(p), p.message and p.message ~= "" and (": " .. p.message) or ""), "KinTitle")
    add("")
    add("It wants:")
    for _, f in ipairs(p.fields or {}) do
      add(field_summary(f))
    end
    if item.state.round then
      add("")
      add("Answering… (choose Answer again to start over)", "KinMeta")
    end
    choices = {
      { key = "a", label = ("Answer (%d field%s, asked one by one)"):format(#(p.fields or {}), #(p.fields or {}) == 1 and "" or "s"), pick = function()
        answer_form(item)
        prompts.update(p.requestId)
      end },
      { key = "d", label = "Decline", deny = true, pick = function()
        respond(p, "decline")
      end },
    }
  end
  return {
    title = ("[%s] %s"):format(M.asker(p), p.message or (p.mode == "url" and "open an address" or "a question")),
    lines = body.lines,
    filetype = "markdown",
    marks = body.marks,
    choices = choices,
    extra_keys = extra,
  }
end

--- elicitation/request notification (also each `pending` one of session/resume).
function M.request(p)
  prompts.push({
    id = p.requestId,
    title = ("[%s] %s"):format(M.asker(p), p.message or "a question"),
    params = p,
    view = M.view,
  })
end

--- Starts answering a form as if the person chose Answer (tests and the Lua API).
function M.answer(id)
  for _, item in ipairs(prompts.items()) do
    if item.id == id then
      answer_form(item)
      return true
    end
  end
  return false
end

--- elicitation/resolved notification.
function M.resolved(p)
  prompts.resolve(p.requestId)
end

return M
