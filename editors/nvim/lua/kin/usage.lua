-- Spend limits in Neovim: the session's cost beside the context gauge (turn/usage's sessionCost
-- and currency), :KinUsage (usage/summary of the session and of today, with the limits), and the
-- lines of a limit approval's preview (its three choices are kin's options, as for any approval).
local M = {}

--- A cost as a person reads it: "0.42 USD" (four decimals under a cent); nil without a currency.
function M.format_cost(v, currency)
  v = tonumber(v)
  if not v or type(currency) ~= "string" or currency == "" then
    return nil
  end
  local fmt = (v ~= 0 and math.abs(v) < 0.01) and "%.4f %s" or "%.2f %s"
  return fmt:format(v, currency)
end

--- The session's cost for the title bar ("$ 0.42 USD"), nil when no model has a price.
function M.cost(usage)
  if type(usage) ~= "table" then
    return nil
  end
  local c = M.format_cost(usage.sessionCost, usage.currency)
  return c and ("session " .. c .. (usage.estimated and " (est.)" or "")) or nil
end

local function group(n)
  local s = tostring(math.floor(tonumber(n) or 0))
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

--- One usage/summary result as lines.
function M.summary_lines(r)
  local what = r.scope == "day" and ("Today (" .. tostring(r.date) .. ", every kin on this computer)")
    or "This session"
  local line = ("%s: %s tokens (%s in, %s cached, %s out)"):format(
    what,
    group(r.totalTokens),
    group(r.inputTokens),
    group(r.cachedInputTokens),
    group(r.outputTokens)
  )
  local c = M.format_cost(r.cost, r.currency)
  if c then
    line = line .. ", " .. c
  end
  if r.estimated then
    line = line .. " (partly kin's estimate)"
  end
  if r.unpriced then
    line = line .. " (some tokens went to a model without a price)"
  end
  local out = { line }
  for _, l in ipairs(r.limits or {}) do
    local used, limit
    if tostring(l.name):match("Cost$") then
      used, limit = M.format_cost(l.used, r.currency), M.format_cost(l.limit, r.currency)
    else
      used, limit = group(l.used) .. " tokens", group(l.limit) .. " tokens"
    end
    out[#out + 1] = ("  limit %s: %s of %s"):format(l.name, used or "?", limit or "?")
  end
  return out
end

--- The preview of a limit approval: which limit and how far, then what each choice does.
function M.limit_lines(p)
  local out = { { "# Spend limit: " .. tostring(p.title), "KinTitle" } }
  if p.warning then
    out[#out + 1] = { "" }
    for l in tostring(p.warning):gmatch("[^\n]+") do
      out[#out + 1] = { l }
    end
  end
  return out
end

--- :KinUsage — what this session and today used, with the spend limits.
function M.show()
  local service = require("kin.service")
  local sid = require("kin.chat").state.current
  local lines = {}
  local scopes = {}
  if sid then
    scopes[#scopes + 1] = { scope = "session", sessionId = sid }
  end
  scopes[#scopes + 1] = { scope = "day", sessionId = sid }
  local function next_scope(i)
    if i > #scopes then
      service.notify(table.concat(lines, "\n"))
      return
    end
    service.request("usage/summary", scopes[i], function(r)
      vim.list_extend(lines, M.summary_lines(r))
      next_scope(i + 1)
    end, function(err)
      service.notify("usage/summary failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end)
  end
  next_scope(1)
end

return M
