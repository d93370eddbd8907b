-- approval/request: exactly what would happen (the whole command with its sandbox, the whole
-- diff, the MCP call and where it goes), shown in kin's own window (kin.panel), with kin's
-- options as kin sent them, each on a fixed key: Deny is always `d` and always the last line,
-- Allow once always `a`. vim.ui.select is never used here: a picker can cover the diff, and one
-- that takes the focus turns typing into an answer. The answer goes back with approval/respond.
local prompts = require("kin.prompts")

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

--- What a command's sandbox lets it do, in one line.
function M.sandbox_text(sb)
  if type(sb) ~= "table" then
    return nil
  end
  if sb.confined then
    local net = sb.network and "with network access" or "no network"
    local w = sb.writable and #sb.writable > 0 and ("; it may change only " .. table.concat(sb.writable, ", ")) or ""
    return ("confined by kin's sandbox, %s%s; everything else is read-only"):format(net, w)
  end
  return "none: it runs unconfined (it can read and change everything you can, and reach the network)"
end

-- Characters a person cannot see, or that reorder what they see: C0/C1 controls (newline and tab
-- kept), bidi embeddings, overrides and isolates, zero-width and other format characters, tags.
-- kin escapes them in an approval's own fields (PROTOCOL.md); a trust item's name, path and
-- command come from the repository's files, so they are escaped here as well, the way kin does.
local function hidden(cp)
  return (cp < 0x20 and cp ~= 0x09 and cp ~= 0x0a) or (cp >= 0x7f and cp <= 0x9f) or cp == 0xad or cp == 0x61c
    or cp == 0x180e or (cp >= 0x200b and cp <= 0x200f) or (cp >= 0x2028 and cp <= 0x202e)
    or (cp >= 0x2060 and cp <= 0x206f) or cp == 0xfeff or (cp >= 0xfff9 and cp <= 0xfffb)
    or (cp >= 0xe0000 and cp <= 0xe007f)
end

--- s with every hidden character written out (`\u202e`, `\x1b`), so "invoice_\u202egpj.exe"
--- cannot pass for "invoice_exe.jpg"; text already escaped (by kin) comes back unchanged.
function M.visible(s)
  if type(s) ~= "string" then
    return s
  end
  local out = s:gsub("[%z\1-\127\194-\244][\128-\191]*", function(ch)
    local ok, cp = pcall(vim.fn.char2nr, ch, true)
    if not ok or not hidden(cp) then
      return nil
    end
    return cp < 0x80 and ("\\x%02x"):format(cp) or cp > 0xffff and ("\\U%08x"):format(cp) or ("\\u%04x"):format(cp)
  end)
  return out
end

-- One line per field of a trust item (PROTOCOL.md "Approvals of kinds project_trust and
-- mcp_skill"), only the fields it has. A hook's detail is the command line it runs: shown whole,
-- every line of it, as a command is in a bash approval.
local function add_item(b, i, it)
  local head = ("%d. %s"):format(i, M.visible(it.kind or "item"))
  if it.name and it.name ~= "" then
    head = head .. " " .. M.visible(it.name)
  end
  if it.changed then
    head = head .. "  [CHANGED since you trusted it]"
  end
  b.add(head, it.changed and "KinWarning" or "KinTitle")
  if it.path and it.path ~= "" then
    b.add("   at:      " .. M.visible(it.path), "KinMeta")
  end
  if it.detail and it.detail ~= "" then
    local detail = vim.split(M.visible(it.detail), "\n", { plain = true })
    if it.kind == "hook" then
      b.add("   runs:    " .. detail[1], "KinCommand")
      for k = 2, #detail do
        b.add("            " .. detail[k], "KinCommand")
      end
    else
      for k, l in ipairs(detail) do
        b.add((k == 1 and "   detail:  " or "            ") .. l)
      end
    end
  end
end

--- The preview of one approval request: every line kin's request carries, nothing cut.
---@return string[] lines, string filetype, {row: integer, hl: string}[] marks
function M.preview_lines(p)
  local b = require("kin.panel").body()
  local ft = "markdown"
  local add = b.add
  if (p.revision or 0) > 0 then
    -- Said first: a long diff would push kin's warning out of view.
    if p.warning and tostring(p.title):find("(no longer applies)", 1, true) then
      add("# kin updated this request: " .. p.warning:gsub("\n", " "), "KinWarning")
    else
      add("# kin updated this request: the file changed while you were deciding; this is the change now", "KinWarning")
    end
  end
  if p.kind == "server_launch" then
    add("# " .. (p.title or ("Start MCP server " .. tostring(p.server))), "KinTitle")
    add("")
    add("Server:      " .. tostring(p.server))
    add("Transport:   " .. tostring(p.transport or "?"))
    add("Destination: " .. tostring(p.destination or "?"))
    if p.scope then
      add("Scope:       " .. p.scope)
    end
    if p.arguments and p.arguments ~= "" then
      -- The env and header names the server gets (values masked by kin).
      add("Passes:      " .. p.arguments)
    end
  elseif p.items and #p.items > 0 then
    -- project_trust and mcp_skill: what would be trusted, every item (a hook's whole command).
    add("# " .. (p.title or "Trust what this folder brings?"), "KinTitle")
    if p.server then
      add("# server: " .. tostring(p.server) .. (p.destination and ("  " .. p.destination) or ""), "KinMeta")
    end
    for i, it in ipairs(p.items) do
      add("")
      add_item(b, i, it)
    end
  elseif p.kind == "acknowledge_unknown" then
    add("# " .. (p.title or "A call may already have run"), "KinTitle")
    if p.tool then
      add("")
      add("Tool: " .. tostring(p.tool))
    end
  elseif p.kind == "continue" then
    add("# " .. (p.title or "Continue the turn?"), "KinTitle")
  elseif p.kind == "limit" then
    for _, l in ipairs(require("kin.usage").limit_lines(p)) do
      add(l[1], l[2])
    end
    p = vim.tbl_extend("force", p, { warning = nil }) -- said above, with what each choice does
  elseif p.server then
    add("# " .. (p.title or ("Call " .. tostring(p.serverTool or p.tool or "a tool"))), "KinTitle")
    add("")
    add("Server:      " .. tostring(p.server))
    add("Destination: " .. tostring(p.destination or "?"))
    if p.serverTool or p.tool then
      add("Tool:        " .. tostring(p.serverTool or p.tool))
    end
    if p.serverTool and p.tool and p.serverTool ~= p.tool then
      add("Exposed as:  " .. tostring(p.tool))
    end
    if p.arguments then
      add("Arguments:")
      add(pretty_json(p.arguments))
    end
  elseif p.diffs and #p.diffs > 0 then
    ft = "diff"
    add("# " .. (p.title or p.tool or "Change files"), "KinTitle")
    for _, d in ipairs(p.diffs) do
      add("")
      if d.unified and d.unified ~= "" then
        b.diff((d.unified:gsub("\n$", "")))
      else
        add("--- " .. tostring(d.path) .. " (no textual diff)", "KinDiffFile")
      end
    end
  elseif p.command then
    ft = "sh"
    add("# " .. (p.title or "Run a command"), "KinTitle")
    add("# cwd: " .. tostring(p.cwd or "?"), "KinMeta")
    local sb = M.sandbox_text(p.sandbox)
    if sb then
      add("# sandbox: " .. sb, "KinMeta")
    end
    add("")
    add(p.command, "KinCommand")
  else
    -- Any other request: only the fields it has (a kind this plugin does not know yet may have
    -- no tool at all).
    add("# " .. (p.title or p.tool or p.kind or "kin asks"), "KinTitle")
    if p.tool then
      add("")
      add("Tool: " .. tostring(p.tool))
    end
    if p.arguments then
      add("Arguments:")
      add(pretty_json(p.arguments))
    end
  end
  if p.warning then
    add("")
    add("⚠ " .. p.warning, "KinWarning")
  end
  if p.alwaysAsk then
    add("")
    add("This change is always asked for (outside the workspace or a sensitive path).", "KinWarning")
  end
  return b.lines, ft, b.marks
end

local function prompt_text(p)
  local who = p.server and ("[" .. p.server .. "] ") or ""
  -- A subagent's question is answered like its parent's, and says whose it is.
  return ("%s%s%s"):format(require("kin.subagents").prefix(p), who, p.title or p.kind or "approve?")
end

local function is_refusal(o)
  return o.optionId == "deny" or o.kind == "reject_once"
end

--- The choices shown: kin's options as kin sent them, each by the name kin gave it (an "always
--- allow" for this session and one for every session are two of kin's options); the refusal comes
--- last, in a fixed place.
function M.choices(p)
  local out, deny = {}, nil
  for _, o in ipairs(p.options or {}) do
    if not deny and is_refusal(o) then
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

-- The key of each option, the same on every prompt. No digits: a number typed out of habit
-- must never pick a grant.
M.KEYS = {
  allow_once = "a",
  allow_always = "s",
  allow_always_permanent = "p",
  trust = "t",
  deny = "d",
}
local KIND_KEYS = { allow_once = "a", allow_always = "s", reject_once = "d" }
local SPARE = { "b", "c", "e", "f", "m", "n", "r", "u", "v", "w", "x", "z" }

--- The keys of a request's choices, in M.choices order.
---@return string[]
function M.keys(p)
  local used, keys = {}, {}
  local choices = M.choices(p)
  for i, o in ipairs(choices) do
    local k = is_refusal(o) and "d" or M.KEYS[o.optionId]
    if k and not used[k] then
      keys[i], used[k] = k, true
    end
  end
  for i, o in ipairs(choices) do
    if not keys[i] then
      local k = KIND_KEYS[o.kind]
      if not k or used[k] then
        for _, s in ipairs(SPARE) do
          if not used[s] then
            k = s
            break
          end
        end
      end
      keys[i], used[k] = k, true
    end
  end
  return keys
end

--- Sends the person's decision, for the revision of the request they saw (kin refuses an
--- answer to one it replaced since; the newer one is shown then).
function M.answer(p, option_id)
  local params = { requestId = p.requestId, decision = option_id }
  if (p.revision or 0) > 0 then
    params.revision = p.revision
  end
  prompts.answer(p.requestId, "approval/respond", params, function()
    M.request(p)
  end)
end

-- The tabstop the file itself is shown with, when it is open.
local function tabstop_for(p)
  local path = p.diffs and p.diffs[1] and p.diffs[1].path
  if path then
    local buf = vim.fn.bufnr(path)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
      return vim.bo[buf].tabstop
    end
  end
  return nil
end

--- The panel view of a request.
---@return kin.PanelView
function M.view(p)
  local lines, ft, marks = M.preview_lines(p)
  local choices = {}
  local keys = M.keys(p)
  for i, o in ipairs(M.choices(p)) do
    choices[#choices + 1] = {
      key = keys[i],
      label = o.name or o.optionId,
      deny = is_refusal(o),
      option = o,
      pick = function()
        M.answer(p, o.optionId)
      end,
    }
  end
  return {
    title = prompt_text(p),
    lines = lines,
    filetype = ft,
    marks = marks,
    tabstop = tabstop_for(p),
    choices = choices,
  }
end

--- approval/request notification (also each `pending` approval of session/resume). One whose
--- requestId is already shown replaces it (a newer revision: the file changed while it waited).
function M.request(p)
  require("kin.subagents").asked(p)
  prompts.push({
    id = p.requestId,
    revision = p.revision or 0,
    title = prompt_text(p),
    params = p,
    view = function()
      return M.view(p)
    end,
  })
end

--- approval/resolved notification.
function M.resolved(p)
  require("kin.subagents").resolved(p)
  prompts.resolve(p.requestId)
end

return M
