-- approval/request: a preview float of exactly what would happen, then vim.ui.select over the
-- options kin sent. Dismissing the dialog denies; the answer goes back with approval/respond.
local service = require("kin.service")
local prompts = require("kin.prompts")
local float = require("kin.float")

local M = {}

local function pretty_json(s)
  if type(s) ~= "string" or s == "" then
    return s and vim.inspect(s) or ""
  end
  local ok, v = pcall(vim.json.decode, s)
  if not ok or type(v) ~= "table" then
    return s
  end
  -- Keep kin's formatting when it already is multi-line.
  if s:find("\n") then
    return s
  end
  local parts = {}
  for k, val in pairs(v) do
    parts[#parts + 1] = ("  %q: %s"):format(tostring(k), vim.json.encode(val))
  end
  table.sort(parts)
  return "{\n" .. table.concat(parts, ",\n") .. "\n}"
end

local function add(lines, text)
  vim.list_extend(lines, vim.split(text or "", "\n", { plain = true }))
end

--- The preview of one approval request.
---@return string[] lines, string filetype
function M.preview_lines(p)
  local lines = {}
  local ft = "markdown"
  if p.kind == "server_launch" then
    add(lines, "# " .. (p.title or ("Start MCP server " .. tostring(p.server))))
    add(lines, "")
    add(lines, "Server:      " .. tostring(p.server))
    add(lines, "Transport:   " .. tostring(p.transport or "?"))
    add(lines, "Destination: " .. tostring(p.destination or "?"))
    if p.scope then
      add(lines, "Scope:       " .. p.scope)
    end
  elseif p.kind == "acknowledge_unknown" then
    add(lines, "# " .. (p.title or "A call may already have run"))
    add(lines, "")
    add(lines, "Tool: " .. tostring(p.tool))
  elseif p.server then
    add(lines, "# " .. (p.title or ("Call " .. tostring(p.tool))))
    add(lines, "")
    add(lines, "Server:      " .. tostring(p.server))
    add(lines, "Destination: " .. tostring(p.destination or "?"))
    add(lines, "Tool:        " .. tostring(p.tool))
    add(lines, "Arguments:")
    add(lines, pretty_json(p.arguments))
  elseif p.diffs and #p.diffs > 0 then
    ft = "diff"
    add(lines, "# " .. (p.title or tostring(p.tool)))
    for _, d in ipairs(p.diffs) do
      add(lines, "")
      if d.unified and d.unified ~= "" then
        add(lines, (d.unified:gsub("\n$", "")))
      else
        add(lines, "--- " .. tostring(d.path) .. " (no textual diff)")
      end
    end
  elseif p.command then
    add(lines, "# " .. (p.title or "Run a command"))
    add(lines, "")
    add(lines, "Command:")
    add(lines, "")
    add(lines, "```sh")
    add(lines, p.command)
    add(lines, "```")
    add(lines, "")
    add(lines, "cwd: " .. tostring(p.cwd or "?"))
  else
    add(lines, "# " .. (p.title or tostring(p.tool)))
    add(lines, "")
    add(lines, "Tool: " .. tostring(p.tool))
    if p.arguments then
      add(lines, "Arguments:")
      add(lines, pretty_json(p.arguments))
    end
  end
  if p.warning then
    add(lines, "")
    add(lines, "⚠ " .. p.warning)
  end
  if p.alwaysAsk then
    add(lines, "")
    add(lines, "This change is always asked for (outside the workspace or a sensitive path).")
  end
  return lines, ft
end

local function prompt_text(p)
  local who = p.server and ("[" .. p.server .. "] ") or ""
  return ("kin: %s%s"):format(who, p.title or p.kind or "approve?")
end

--- The choices shown: kin's options as kin sent them, each by the name kin gave it (an "always
--- allow" for this session and one for every session are two of kin's options); the refusal comes
--- last, in a fixed place, and dismissing the dialog sends it too.
function M.choices(p)
  local out, deny = {}, nil
  for _, o in ipairs(p.options or {}) do
    if not deny and (o.optionId == "deny" or o.kind == "reject_once") then
      deny = o
    else
      table.insert(out, o)
    end
  end
  if deny then
    table.insert(out, deny)
  end
  return out
end

--- The optionId that refuses the request.
function M.deny_option(p)
  for _, o in ipairs(p.options or {}) do
    if o.optionId == "deny" or o.kind == "reject_once" then
      return o.optionId
    end
  end
  return "deny"
end

--- Shows one approval request and answers it.
function M.show(p, done)
  local lines, ft = M.preview_lines(p)
  local ok, preview = pcall(float.open, lines, { title = "kin: approval", filetype = ft })
  if not ok then
    preview = { close = function() end }
  end
  M.active = { requestId = p.requestId, preview = preview, lines = lines }
  prompts.on_resolved(p.requestId, function()
    preview.close()
  end)
  -- The default vim.ui.select (inputlist) blocks: draw the preview first.
  pcall(vim.cmd, "redraw")
  local options = M.choices(p)
  vim.ui.select(options, {
    prompt = prompt_text(p),
    kind = "kin.approval",
    format_item = function(o)
      return o.name or o.optionId
    end,
  }, function(choice)
    preview.close()
    if M.active and M.active.requestId == p.requestId then
      M.active = nil
    end
    local decision = (choice and choice.optionId) or M.deny_option(p)
    if not prompts.is_resolved(p.requestId) then
      local params = { requestId = p.requestId, decision = decision }
      service.request("approval/respond", params, nil, function(err)
        if err.code ~= -32013 then
          service.notify("approval/respond failed: " .. tostring(err.message), vim.log.levels.ERROR)
        end
      end)
    end
    done()
  end)
end

--- approval/request notification.
function M.request(p)
  prompts.push(p.requestId, function(done)
    M.show(p, done)
  end)
end

--- approval/resolved notification.
function M.resolved(p)
  prompts.resolve(p.requestId)
end

return M
