-- elicitation/request: an MCP server (or kin's own `ask` tool) asks the person something. The
-- question first appears in kin's window (kin.panel), which takes no focus: only an explicit key
-- there starts answering, so typing elsewhere never becomes an answer. kin's window lists the
-- fields in the order the server wrote them, each with its description and its default (a
-- choice's by its title). Form mode then asks field by field in that order (vim.ui.input;
-- vim.ui.select for a choice and booleans; for a multi-select, a vim.ui.select whose picks toggle
-- options until "Done"), each prompt starting with the field's title (never cut off behind a
-- repeated prefix) and followed by its description; dismissing any field declines the whole
-- request, so nothing partial is ever sent. Answers are checked here before sending (numbers'
-- ranges, lengths, dates, date-times, emails, URIs, patterns); when kin still refuses some
-- fields (-32602 with data.fields), only those are asked again, the others kept. A form kin
-- closes (its call ended, its turn was cancelled, its server went away) is closed here too, with
-- the reason. A picker that never calls back holds nothing up: the question stays in kin's
-- window, to be answered again or declined. URL mode shows the URL and opens it only after the
-- person consents, and says "accept" only when it really opened. kin checks every answer again.
local service = require("kin.service")
local prompts = require("kin.prompts")

local M = {}

local function fields_of(p)
  return p.fields or {}
end

local function field_by_name(p, name)
  for i, f in ipairs(fields_of(p)) do
    if f.name == name then
      return f, i
    end
  end
end

local function title_of(f)
  return (f.title and f.title ~= "") and f.title or f.name
end

--- What kin refused of an answer (elicitation/respond's -32602 data): the names it gave that
--- are fields of the form, in the form's order, and every problem as a line ("Age must be at
--- least 0").
function M.refused(p, err)
  local data = type(err) == "table" and type(err.data) == "table" and err.data or {}
  local names, lines = {}, {}
  for _, fe in ipairs(type(data.fields) == "table" and data.fields or {}) do
    if type(fe) == "table" and type(fe.name) == "string" then
      local f = field_by_name(p, fe.name)
      lines[#lines + 1] = ("%s %s"):format(f and title_of(f) or fe.name, tostring(fe.message or "does not fit"))
      if f then
        names[fe.name] = true
      end
    end
  end
  local redo = {}
  for _, f in ipairs(fields_of(p)) do
    if names[f.name] then
      redo[#redo + 1] = f.name
    end
  end
  return redo, lines
end

-- Sends the answer; when kin refuses some fields, the question comes back with the rest of the
-- answer kept and only those fields to ask again (state.redo).
local function respond(p, action, content)
  local params = { requestId = p.requestId, action = action }
  if action == "accept" and p.mode ~= "url" then
    params.content = (content and next(content)) and content or vim.empty_dict()
  end
  prompts.answer(p.requestId, "elicitation/respond", params, function(err)
    local state = {}
    if action == "accept" and p.mode ~= "url" then
      local redo, lines = M.refused(p, err)
      if #redo > 0 then
        local kept = vim.deepcopy(content or {})
        for _, name in ipairs(redo) do
          kept[name] = nil
        end
        state = { redo = redo, kept = kept, problems = lines, answered = vim.deepcopy(content or {}) }
      end
    end
    M.request(p, state) -- kin keeps it open for a corrected answer
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

--- Who asks: kin itself (its ask tool, `source` "kin") or the MCP server.
function M.asker(p)
  if p.source == "kin" then
    return "kin"
  end
  return p.server or "mcp"
end

--- Where the answer goes. The model may ask for anything through kin's ask tool, a password
--- included, so its forms say plainly that the model reads the answer.
function M.destination(p)
  if p.source == "kin" then
    return "What you answer goes to the model and stays in this session. Never type a password, key or token here."
  end
  return ("What you answer goes to %s."):format(p.server or "the MCP server")
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

--- A value as the person sees it: a choice by its title, a list of choices by theirs.
function M.shown_value(f, v)
  if type(v) == "table" then
    local out = {}
    for _, x in ipairs(v) do
      out[#out + 1] = M.shown_value(f, x)
    end
    return table.concat(out, ", ")
  end
  for _, it in ipairs(M.choice_items(f)) do
    if it.value == v then
      return it.label
    end
  end
  if type(v) == "boolean" then
    return v and "Yes" or "No"
  end
  return tostring(v)
end

--- The prompt of field i of n: its title first (a picker's title cut short still names the
--- field), its limits, then its description. Which server asks is in kin's window above.
function M.field_prompt(p, f, i, n)
  local extra = {}
  if i and n and n > 1 then
    extra[#extra + 1] = ("%d/%d"):format(i, n)
  end
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
  local desc = (f.description and f.description ~= "") and (" — " .. f.description) or ""
  return ("%s%s%s: "):format(title_of(f), suffix, desc)
end

--- Checks a multi-select's picks; returns an error or nil.
function M.validate_choices(f, values)
  local title = title_of(f)
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
-- order. The default (or what was answered before) is chosen to begin with; dismissing declines
-- the whole request.
function M.ask_choices(p, f, prompt, cb, start)
  local chosen = {}
  local first = start
  if first == nil then
    first = f.default
  end
  for _, v in ipairs(type(first) == "table" and first or {}) do
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

local function leap(y)
  return (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
end

-- A calendar date: YYYY-MM-DD with a month of 1-12 and a day that month has.
local function real_date(y, m, d)
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if not (y and m and d) or m < 1 or m > 12 or d < 1 then
    return false
  end
  local days = ({ 31, leap(y) and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 })[m]
  return d <= days
end

local FORMAT_CHECK = {
  email = function(t)
    -- local@domain, nothing a mail address cannot hold unquoted (kin checks it fully)
    local bad = "[@%s<>(),;:\"%[%]\\]"
    local user, domain = t:match("^([^@]+)@([^@]+)$")
    return user ~= nil and not user:find(bad) and not domain:find(bad) and not domain:find("^%.") and not domain:find("%.$")
  end,
  uri = function(t)
    return t:match("^%a[%w+.-]*:%S+$") ~= nil
  end,
  date = function(t)
    local y, m, d = t:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
    return y ~= nil and real_date(y, m, d)
  end,
  ["date-time"] = function(t)
    local y, mo, d, h, mi, rest = t:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt](%d%d):(%d%d)(.*)$")
    if not y or not real_date(y, mo, d) or tonumber(h) > 23 or tonumber(mi) > 59 then
      return false
    end
    local sec, zone = rest:match("^:(%d%d)(.*)$")
    if not sec or tonumber(sec) > 60 then
      return false -- RFC 3339 has seconds
    end
    zone = zone:gsub("^%.%d+", "")
    if zone == "Z" or zone == "z" then
      return true
    end
    local zh, zm = zone:match("^[+-](%d%d):(%d%d)$")
    return zh ~= nil and tonumber(zh) <= 23 and tonumber(zm) <= 59
  end,
}

-- ECMA 262 pattern (JSON Schema's) -> a Vim regex with the same meaning, or nil when it uses
-- what has no plain equivalent (lookaround, \b, \p{}, lazy quantifiers, ...): kin checks those.
local VERY_MAGIC_LITERAL = { ["<"] = true, [">"] = true, ["="] = true, ["@"] = true, ["%"] = true, ["~"] = true, ["&"] = true }
local CLASS_ESCAPES = { d = "0-9", w = "0-9A-Za-z_", s = " \t\n\r\f\v" }

function M.vim_pattern(ecma)
  local out, i, n = { "\\v\\C" }, 1, #ecma
  local in_class = false
  while i <= n do
    local c = ecma:sub(i, i)
    if c == "\\" then
      local e = ecma:sub(i + 1, i + 1)
      if e == "" or e:match("[bBpPkucx0-9]") then
        return nil
      end
      if in_class then
        if CLASS_ESCAPES[e] then
          out[#out + 1] = CLASS_ESCAPES[e]
        elseif e:match("[DWS]") then
          return nil
        else
          out[#out + 1] = "\\" .. e
        end
      else
        out[#out + 1] = "\\" .. e
      end
      i = i + 2
    elseif in_class then
      if c == "]" then
        in_class = false
      end
      out[#out + 1] = c
      i = i + 1
    elseif c == "[" then
      in_class = true
      out[#out + 1] = c
      if ecma:sub(i + 1, i + 1) == "^" then
        out[#out + 1] = "^"
        i = i + 1
      end
      if ecma:sub(i + 1, i + 1) == "]" then -- a literal ] first in a class
        out[#out + 1] = "\\]"
        i = i + 1
      end
      i = i + 1
    elseif c == "(" then
      local q = ecma:sub(i + 1, i + 2)
      if q == "?:" then
        out[#out + 1] = "%("
        i = i + 3
      elseif q:sub(1, 1) == "?" then
        return nil
      else
        out[#out + 1] = "("
        i = i + 1
      end
    elseif (c == "*" or c == "+" or c == "?" or c == "}") and ecma:sub(i + 1, i + 1) == "?" then
      return nil -- lazy
    elseif VERY_MAGIC_LITERAL[c] then
      out[#out + 1] = "\\" .. c
      i = i + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  if in_class then
    return nil
  end
  return table.concat(out)
end

--- Whether text matches a field's pattern (anywhere, as JSON Schema's): true, false, or nil when
--- it cannot be checked here (kin checks it).
function M.pattern_matches(pattern, text)
  local vp = M.vim_pattern(pattern)
  if not vp then
    return nil
  end
  local ok, re = pcall(vim.regex, vp)
  if not ok then
    return nil
  end
  return re:match_str(text) ~= nil
end

--- Checks a typed value against its field; returns the value to send (nil to omit) or an error.
function M.validate(f, text)
  local title = title_of(f)
  if text == "" then
    if f.required then
      return nil, title .. " is required"
    end
    return nil
  end
  if f.type == "integer" or f.type == "number" then
    local n = tonumber(text)
    if not n or n ~= n or n == math.huge or n == -math.huge then
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
  if f.pattern and M.pattern_matches(f.pattern, text) == false then
    return nil, ("%s must match the pattern %s"):format(title, f.pattern)
  end
  return text
end

-- The question being asked now, for closing it when kin resolves the form: which kind of
-- picker, and the window that had the cursor before it opened.
local asking = {}

-- Asks one field; cb(ok, value): ok false means the person dismissed it. before is what was
-- answered before (asked again): it is the starting point.
local function ask_field(p, f, prompt, before, cb)
  local function done(ok, value)
    asking[p.requestId] = nil
    cb(ok, value)
  end
  asking[p.requestId] = { win = vim.api.nvim_get_current_win() }
  if f.type == "multi_select" then
    return M.ask_choices(p, f, prompt, done, before)
  end
  local default = before
  if default == nil then
    default = f.default
  end
  if f.enum then
    local items = M.choice_items(f)
    for _, it in ipairs(items) do
      if it.value == default then
        it.label = it.label .. " (default)"
      end
    end
    if not f.required then
      items[#items + 1] = { skip = true, label = "(leave empty)" }
    end
    return select_item(items, prompt, "kin.elicitation", done, function(choice)
      done(true, not choice.skip and choice.value or nil)
    end)
  end
  if f.type == "boolean" then
    local items = {
      { value = true, label = default == true and "Yes (default)" or "Yes" },
      { value = false, label = default == false and "No (default)" or "No" },
    }
    if not f.required then
      items[#items + 1] = { skip = true, label = "(leave empty)" }
    end
    return select_item(items, prompt, "kin.elicitation", done, function(choice)
      if choice.skip then
        return done(true, nil)
      end
      done(true, choice.value)
    end)
  end
  local function ask()
    vim.ui.input({
      prompt = prompt,
      default = default ~= nil and tostring(default) or nil,
    }, function(text)
      if text == nil then
        return done(false)
      end
      local value, err = M.validate(f, text)
      if err then
        service.notify(err, vim.log.levels.WARN)
        return vim.schedule(ask)
      end
      done(true, value)
    end)
  end
  ask()
end

local function field_lines(f, problem)
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
    bits[#bits + 1] = "default " .. M.shown_value(f, f.default)
  end
  local out = { ("  - %s (%s)"):format(title_of(f), table.concat(bits, "; ")) }
  if f.description and f.description ~= "" then
    out[#out + 1] = "      " .. f.description
  end
  if problem then
    out[#out + 1] = "      ! " .. problem
  end
  return out
end

-- Asks the form's fields one by one (after a refusal, only the fields kin refused, with the
-- other answers kept), starting over on each call: a callback of an earlier round (a picker that
-- came back late) is ignored.
local function answer_form(item)
  local p = item.params
  item.state.round = (item.state.round or 0) + 1
  local round = item.state.round
  local function current()
    return item.state.round == round and not prompts.is_resolved(p.requestId)
  end
  local todo = {}
  local redo = item.state.redo
  for _, f in ipairs(fields_of(p)) do
    if not redo or vim.tbl_contains(redo, f.name) then
      todo[#todo + 1] = f
    end
  end
  local content = vim.deepcopy(item.state.kept or {})
  local before = item.state.answered or {}
  local i = 0
  local function step()
    if not current() then
      return
    end
    i = i + 1
    local f = todo[i]
    if not f then
      return respond(p, "accept", content)
    end
    ask_field(p, f, M.field_prompt(p, f, i, #todo), before[f.name], function(ok, value)
      if not current() then
        return
      end
      if not ok then
        return respond(p, "decline")
      end
      if value ~= nil then
        content[f.name] = value
      end
      before[f.name] = value
      vim.schedule(step)
    end)
  end
  item.state.answered = before
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
    add(M.destination(p), "KinWarning")
    add("")
    local redo = item.state.redo
    if redo then
      add("kin refused part of your answer; the rest is kept:", "KinWarning")
      for _, line in ipairs(item.state.problems or {}) do
        add("  " .. line, "KinWarning")
      end
      add("")
    end
    add("It wants:")
    for _, f in ipairs(fields_of(p)) do
      local problem
      if redo and vim.tbl_contains(redo, f.name) then
        problem = "to answer again"
      end
      for _, line in ipairs(field_lines(f, problem)) do
        add(line)
      end
    end
    if item.state.round then
      add("")
      add("Answering… (choose Answer again to start over)", "KinMeta")
    end
    local n = redo and #redo or #fields_of(p)
    local label = redo and ("Answer again (%d field%s to correct)"):format(n, n == 1 and "" or "s")
      or ("Answer (%d field%s, asked one by one)"):format(n, n == 1 and "" or "s")
    choices = {
      { key = "a", label = label, pick = function()
        answer_form(item)
        prompts.update(p.requestId)
      end },
      { key = "d", label = "Decline", deny = true, pick = function()
        respond(p, "decline")
      end },
    }
  end
  return {
    title = require("kin.subagents").prefix(p) .. ("[%s] %s"):format(M.asker(p), p.message or (p.mode == "url" and "open an address" or "a question")),
    lines = body.lines,
    filetype = "markdown",
    marks = body.marks,
    choices = choices,
    extra_keys = extra,
  }
end

--- elicitation/request notification (also each `pending` one of session/resume). state is the
--- question's own state when it comes back (kin refused part of an answer).
function M.request(p, state)
  require("kin.subagents").asked(p)
  prompts.push({
    id = p.requestId,
    title = require("kin.subagents").prefix(p) .. ("[%s] %s"):format(M.asker(p), p.message or "a question"),
    params = p,
    view = M.view,
    state = state,
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

local REASONS = {
  cancelled = "its turn or request was cancelled",
  call_ended = "the tool call that asked ended without it",
  server_gone = "the MCP server that asked went away",
  disconnected = "the connection to kin closed",
  shutdown = "kin shut down",
}

--- Why kin closed a question, in words.
function M.reason_text(reason)
  return REASONS[reason] or tostring(reason or "closed")
end

-- Closes the picker a question of this form has open, if it still has the cursor (a person
-- answering elsewhere keeps theirs): Neovim's own input line, dressing.nvim's input or select,
-- telescope's prompt. The picker's callback then comes back empty and is ignored.
local function close_picker(id)
  local a = asking[id]
  asking[id] = nil
  if not a then
    return
  end
  if vim.fn.getcmdtype() == "@" then -- input() on the command line
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-c>", true, false, true), "n", false)
    return
  end
  local win = vim.api.nvim_get_current_win()
  if win == a.win then
    return
  end
  local buf = vim.api.nvim_win_get_buf(win)
  local ft = vim.bo[buf].filetype
  if ft == "TelescopePrompt" then
    pcall(function()
      require("telescope.actions").close(buf)
    end)
  elseif ft == "DressingInput" or ft == "DressingSelect" then
    pcall(vim.api.nvim_win_close, win, true)
  end
end

--- elicitation/resolved notification: kin closed the question. One the person did not answer
--- here (its call ended, its turn was cancelled, its server went away) is closed here too,
--- saying why.
function M.resolved(p)
  require("kin.subagents").resolved(p)
  local item
  for _, it in ipairs(prompts.items()) do
    if it.id == p.requestId then
      item = it
    end
  end
  prompts.resolve(p.requestId)
  if item and p.reason and p.reason ~= "person" then
    close_picker(p.requestId)
    service.notify(("kin closed the question from %s: %s"):format(M.asker(item.params), M.reason_text(p.reason)),
      vim.log.levels.WARN)
  end
end

return M
