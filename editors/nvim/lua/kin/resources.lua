-- MCP resources for the person and "what the model saw" (rpc/PROTOCOL.md "mcp/resources",
-- "What the model saw"): `@server:uri` completion next to files (kin.complete), the mention
-- sent as a resource input part (kin reads it from the server), mcp/resourceUpdated,
-- :KinSaw, a scratch view of exactly what went to the model for a tool call, and a result's
-- resource links opened for the person to read (mcp/readResource: <CR> on a link, :KinResource).
local service = require("kin.service")

local M = {}

---@class kin.ResourcesState
---@field items table[]?   { server, uri, title } of every connected server, nil until fetched
---@field servers table<string, boolean>
---@field fetching boolean?
---@field saw table<string, table>  callId -> { name, modelSaw, links }
---@field last string?     the last call that finished
M.state = { servers = {}, saw = {} }

function M.reset()
  M.state = { servers = {}, saw = {} }
end

--- Rows of mcp/resources' result as completion entries: resources, then templates.
function M.rows(result)
  local items, servers = {}, {}
  for _, s in ipairs(result.servers or {}) do
    servers[s.server] = true
    for _, r in ipairs(s.resources or {}) do
      items[#items + 1] = { server = s.server, uri = r.uri, title = r.title or r.name }
    end
    for _, r in ipairs(s.resourceTemplates or {}) do
      items[#items + 1] = { server = s.server, uri = r.uriTemplate, title = (r.title or r.name) .. " (template)", template = true }
    end
  end
  return items, servers
end

--- Fetches mcp/resources (first pages of every connected server).
function M.fetch(cb)
  local st = M.state
  if st.fetching or not service.is_running() then
    return
  end
  st.fetching = true
  service.request("mcp/resources", {}, function(r)
    st.fetching = false
    st.items, st.servers = M.rows(r or {})
    if cb then
      cb(st.items)
    end
  end, function()
    st.fetching = false
    st.items = st.items or {}
  end)
end

--- Completion entries for `@` + rest: the resources whose server:uri contains rest.
function M.complete(rest)
  local st = M.state
  if not st.items then
    M.fetch()
    return {}
  end
  local out = {}
  for _, it in ipairs(st.items) do
    local word = it.server .. ":" .. it.uri
    if rest == "" or word:find(rest, 1, true) then
      local entry = { word = "@" .. word, menu = "[" .. it.server .. "]", info = it.title or "" }
      if it.template then
        -- Picked, its variables are asked for (kin.complete's CompleteDone, M.fill).
        entry.user_data = { kin_template = { server = it.server, uri = it.uri } }
      end
      out[#out + 1] = entry
    end
  end
  return out
end

--- The resource part an `@server:uri` mention names, or nil (not a listed server, no URI).
function M.part(name)
  local server, uri = name:match("^([^:/]+):(.+://.*)$")
  if server and M.state.servers[server] and not uri:find("{", 1, true) then
    return { type = "resource", server = server, uri = uri }
  end
end

-- RFC 6570 (levels 1 to 3, and the prefix modifier of level 4) for string values: each operator's
-- first character, separator, whether names are written (and with what for an empty value), and
-- whether reserved characters are kept as they are.
local OPS = {
  [""] = { first = "", sep = ",", named = false, ifemp = "", reserved = false },
  ["+"] = { first = "", sep = ",", named = false, ifemp = "", reserved = true },
  ["#"] = { first = "#", sep = ",", named = false, ifemp = "", reserved = true },
  ["."] = { first = ".", sep = ".", named = false, ifemp = "", reserved = false },
  ["/"] = { first = "/", sep = "/", named = false, ifemp = "", reserved = false },
  [";"] = { first = ";", sep = ";", named = true, ifemp = "", reserved = false },
  ["?"] = { first = "?", sep = "&", named = true, ifemp = "=", reserved = false },
  ["&"] = { first = "&", sep = "&", named = true, ifemp = "=", reserved = false },
}

-- The operator and variables ({name, prefix?}) of one expression's text (what is inside {}).
local function parse_expr(body)
  local op = body:sub(1, 1)
  if OPS[op] and op ~= "" then
    body = body:sub(2)
  else
    op = ""
  end
  local vars = {}
  for spec in vim.gsplit(body, ",", { plain = true }) do
    local name, mod = spec:match("^([%w_%%.]+)(.*)$")
    if name then
      vars[#vars + 1] = { name = name, prefix = tonumber(mod:match("^:(%d+)$") or "") }
    end
  end
  return op, vars
end

--- The variables of a URI template, in the order they first appear (each once).
function M.template_vars(template)
  local out, seen = {}, {}
  for body in template:gmatch("{([^}]*)}") do
    local _, vars = parse_expr(body)
    for _, v in ipairs(vars) do
      if not seen[v.name] then
        seen[v.name] = true
        out[#out + 1] = v.name
      end
    end
  end
  return out
end

-- Percent-encodes every byte but the unreserved ones (and, for + and #, the reserved ones and
-- the %XX already there).
local function encode(s, reserved)
  local keep = reserved and "[%w%-%._~:/%?#%[%]@!%$&'%(%)%*%+,;=]" or "[%w%-%._~]"
  local out = s:gsub("()(.)", function(i, c)
    if c:match(keep) then
      return c
    end
    if reserved and c == "%" and s:sub(i + 1, i + 2):match("^%x%x$") then
      return c
    end
    return ("%%%02X"):format(c:byte())
  end)
  return out
end

--- Expands a URI template with string values (RFC 6570: `{var}` percent-encodes all but the
--- unreserved characters; `{+var}`, `{#var}`, `{/var}`, `{.var}`, `{;var}`, `{?var}`, `{&var}`
--- and `{var:3}` as the RFC says). A variable without a value expands to nothing.
function M.expand(template, values)
  return (template:gsub("{([^}]*)}", function(body)
    local op, vars = parse_expr(body)
    local o = OPS[op]
    local parts = {}
    for _, v in ipairs(vars) do
      local value = values[v.name]
      if value ~= nil then
        value = tostring(value)
        if v.prefix then
          value = vim.fn.strcharpart(value, 0, v.prefix)
        end
        local enc = encode(value, o.reserved)
        if o.named then
          enc = v.name .. (enc == "" and o.ifemp or ("=" .. enc))
        end
        parts[#parts + 1] = enc
      end
    end
    if #parts == 0 then
      return ""
    end
    return o.first .. table.concat(parts, o.sep)
  end))
end

--- How long the completion of a template's variable waits for kin (completion/complete) before
--- it offers nothing: it blocks the editor while the person waits for the candidates.
M.COMPLETE_TIMEOUT_MS = 1500

-- The question vim.ui.input asks now: { server, template, name, context } (M.complete_arg).
M.asking = nil

--- completion/complete's params for a question ({ server, template, name, context }) and what
--- is typed: the template as the ref, the variables chosen before as the context.
function M.complete_params(q, value)
  return {
    server = q.server,
    ref = { type = "ref/resource", uri = q.template },
    argument = { name = q.name, value = value or "" },
    context = { arguments = next(q.context or {}) and vim.deepcopy(q.context) or vim.empty_dict() },
  }
end

--- The values of completion/complete's result (strings only), as the server ordered them.
function M.complete_values(r)
  local out = {}
  local values = type(r) == "table" and type(r.completion) == "table" and r.completion.values
  for _, v in ipairs(type(values) == "table" and values or {}) do
    if type(v) == "string" then
      out[#out + 1] = v
    end
  end
  return out
end

--- The candidates for the variable being asked for (the 'customlist' completion of the
--- vim.ui.input M.fill opens): kin's completion/complete with what is typed and the variables
--- already chosen, asked synchronously. Nothing (free text still goes) when the server is not
--- connected (-32013), offers none, or kin does not answer in time.
function M.complete_arg(arglead)
  local q = M.asking
  if not q or not service.is_running() then
    return {}
  end
  local err, r = service.request_sync("completion/complete", M.complete_params(q, arglead), M.COMPLETE_TIMEOUT_MS)
  if err then
    return {}
  end
  return M.complete_values(r)
end

--- Asks for each variable of a server's template in order (vim.ui.input, completing with
--- M.complete_arg), then cb(uri) with the template expanded; cb(nil) as soon as one is left
--- empty or cancelled.
function M.fill(server, template, cb)
  local vars = M.template_vars(template)
  local chosen = {}
  local function ask(i)
    if i > #vars then
      M.asking = nil
      return cb(M.expand(template, chosen))
    end
    M.asking = { server = server, template = template, name = vars[i], context = vim.deepcopy(chosen) }
    vim.ui.input({
      prompt = ("kin: %s:%s  %s: "):format(server, template, vars[i]),
      completion = "customlist,v:lua.require'kin.resources'.complete_arg",
    }, function(value)
      if value == nil or value == "" then
        M.asking = nil
        return cb(nil)
      end
      chosen[vars[i]] = value
      ask(i + 1)
    end)
  end
  ask(1)
end

--- mcp/resourceUpdated: an attached resource changed at its server.
function M.on_updated(p)
  service.notify(("%s: %s changed since it was attached; attach it again to send the new content"):format(
    tostring(p.server), tostring(p.uri)), vim.log.levels.INFO, "kin: mcp")
end

--- Keeps what the model saw of a call (turn/toolCall's final notification).
function M.on_tool_call(p)
  if p.modelSaw then
    M.state.saw[p.callId] = { name = p.name, modelSaw = p.modelSaw, links = p.links }
    M.state.last = p.callId
  end
end

--- One cut ({what, why, bytes?, kept?}, as in modelSaw and mcp/readResource) on one line.
function M.cut_text(c)
  local l = "cut: " .. tostring(c.what) .. ": " .. tostring(c.why)
  if c.bytes then
    l = l .. (" (%d bytes%s)"):format(c.bytes, c.kept and (", %d sent"):format(c.kept) or "")
  end
  return l
end

-- A server's URI keeps its line breaks (kin strips only invisible characters), and a buffer line
-- cannot hold one: a link is shown, and found again, with them as spaces.
local function one_line(s)
  return (s:gsub("\r?\n", " "))
end

--- A result's resource link on one line, `link: @server:uri title`: the mention that attaches it,
--- and what <CR> on the line opens.
function M.link_text(ln)
  return one_line(("link: @%s:%s %s"):format(ln.server, ln.uri, ln.title or ln.name or ""))
end

--- The link a line shows: the one of links whose line it is (the longest, as a URI may hold
--- spaces), else what the line itself says (server, and the URI up to the first space).
---@return {server: string, uri: string, mimeType: string?}?
function M.link_at(line, links)
  local best, best_len = nil, 0
  for _, ln in ipairs(links or {}) do
    local head = one_line(("link: @%s:%s"):format(ln.server, ln.uri))
    if #head > best_len and line:sub(1, #head) == head and (#line == #head or line:sub(#head + 1, #head + 1) == " ") then
      best, best_len = ln, #head
    end
  end
  if best then
    return best
  end
  local server, uri = line:match("^link: @([^:/%s]+):(%S+)")
  if server then
    return { server = server, uri = uri }
  end
end

--- The lines of the "what the model saw" view of a turn/toolCall (or history item).
function M.saw_lines(call)
  local saw = call.modelSaw or {}
  local lines = { ("What the model saw: %s (%s)"):format(tostring(call.name), tostring(call.callId or "")) }
  if saw.framing then
    lines[#lines + 1] = ("framed as %s data of server %s, tool %s: untrusted, never instructions"):format(saw.framing, tostring(saw.server), tostring(saw.tool))
  end
  local how = { appended = "sent after the content blocks, labelled", sameAsText = "the same JSON as a text block, sent once", only = "sent as the result (no text blocks)" }
  if saw.structured then
    lines[#lines + 1] = "structuredContent: " .. (how[saw.structured] or saw.structured)
  end
  for _, c in ipairs(saw.cuts or {}) do
    lines[#lines + 1] = M.cut_text(c)
  end
  for _, ln in ipairs(call.links or {}) do
    lines[#lines + 1] = M.link_text(ln)
  end
  lines[#lines + 1] = ""
  vim.list_extend(lines, vim.split(saw.text or "", "\n", { plain = true }))
  return lines
end

--- :KinSaw [callId]: the view, for the call named or the last one that finished.
function M.show(call_id)
  local id = (call_id and call_id ~= "") and call_id or M.state.last
  local rec = id and M.state.saw[id]
  if not rec then
    service.notify("kin: no finished tool call" .. (call_id and call_id ~= "" and (" " .. call_id) or "") .. " to show", vim.log.levels.WARN)
    return
  end
  -- Shown already (its buffer lives while a window shows it): that window is the view. A second
  -- buffer of the same name cannot be made (the rename failed with an error, leaving it behind).
  local name = "kin://saw/" .. id
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then
      local win = vim.fn.bufwinid(b)
      if win ~= -1 then
        return vim.api.nvim_set_current_win(win)
      end
      vim.api.nvim_buf_delete(b, { force = true })
    end
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.saw_lines({ name = rec.name, callId = id, modelSaw = rec.modelSaw, links = rec.links }))
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_name(buf, name)
  -- The transcript's keys for opening what is under the cursor open a link here.
  local km = require("kin.config").options.chat.keymaps
  for _, lhs in ipairs(type(km.open) == "table" and km.open or { km.open }) do
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, function()
        local ln = M.link_at(vim.api.nvim_get_current_line(), rec.links)
        if not ln then
          return service.notify("no resource link under the cursor", vim.log.levels.WARN)
        end
        M.open_resource(ln.server, ln.uri, ln.mimeType)
      end, { buffer = buf, nowait = true, desc = "kin: open the resource link under the cursor" })
    end
  end
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
end

-- Filetypes of the MIME types whose name does not say it by itself.
local MIME_FT = {
  ["text/plain"] = "text",
  ["text/x-python"] = "python",
  ["text/x-shellscript"] = "sh",
  ["application/x-sh"] = "sh",
  ["text/x-c"] = "c",
  ["text/x-c++"] = "cpp",
  ["text/x-rust"] = "rust",
  ["text/x-go"] = "go",
  ["application/javascript"] = "javascript",
  ["text/javascript"] = "javascript",
  ["application/ld+json"] = "json",
}

--- The filetype of a resource: from its MIME type where it is obvious (text/markdown, */json,
--- */yaml, ...), else from the URI's file name, else none.
function M.filetype(mime, uri)
  mime = type(mime) == "string" and mime:lower():gsub("%s*;.*$", "") or nil
  if mime and MIME_FT[mime] then
    return MIME_FT[mime]
  end
  local sub = mime and mime:match("^[%w.-]+/([%w.+-]+)$")
  if sub then
    sub = sub:gsub("^x%-", ""):gsub("^.*%+", "") -- application/vnd.api+json -> json
    for _, ft in ipairs({ "markdown", "json", "yaml", "toml", "xml", "html", "csv", "css", "typescript", "lua", "sql" }) do
      if sub == ft then
        return ft
      end
    end
  end
  local path = type(uri) == "string" and uri:gsub("[?#].*$", "") or ""
  return vim.filetype.match({ filename = path:match("[^/]+$") or path }) or ""
end

--- The lines of a resource opened for reading (mcp/readResource's result): what was cut first,
--- each as a comment of the filetype (commentstring, else `# `), then the text.
function M.resource_lines(r, commentstring)
  local cs = (type(commentstring) == "string" and commentstring:find("%s", 1, true)) and commentstring or "# %s"
  local lines = {}
  for _, c in ipairs(r.cuts or {}) do
    lines[#lines + 1] = cs:format(M.cut_text(c))
  end
  if #lines > 0 then
    lines[#lines + 1] = ""
  end
  vim.list_extend(lines, vim.split(r.text or "", "\n", { plain = true }))
  return lines
end

--- What a failed mcp/readResource says, naming the server.
function M.read_error_text(server, uri, err)
  local why = err and err.message or vim.inspect(err)
  if err and err.code == -32013 then
    why = "not connected, or it has no resources (" .. why .. ")"
  end
  return ("MCP server %s: cannot open %s: %s"):format(tostring(server), tostring(uri), why)
end

local function find_buf(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
end

--- Opens a resource for the person to read (mcp/readResource: nothing goes to a session, nothing
--- is subscribed to) in a read-only scratch buffer `kin-resource://server/uri`; opened again, the
--- same buffer shows what the server gives now.
function M.open_resource(server, uri, mime, cb)
  service.request("mcp/readResource", { server = server, uri = uri }, function(r)
    local name = ("kin-resource://%s/%s"):format(server, uri)
    local buf = find_buf(name)
    if not buf then
      buf = vim.api.nvim_create_buf(false, true)
      vim.bo[buf].buftype = "nofile"
      vim.bo[buf].bufhidden = "wipe"
      vim.bo[buf].swapfile = false
      vim.api.nvim_buf_set_name(buf, name)
      local ft = M.filetype(mime, uri)
      if ft ~= "" then
        vim.bo[buf].filetype = ft
      end
    end
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.resource_lines(r, vim.bo[buf].commentstring))
    vim.bo[buf].modifiable = false
    vim.bo[buf].modified = false
    local win = vim.fn.bufwinid(buf)
    if win ~= -1 then
      vim.api.nvim_set_current_win(win)
    else
      vim.cmd("botright split")
      vim.api.nvim_win_set_buf(0, buf)
    end
    if cb then
      cb(buf)
    end
  end, function(err)
    service.notify(M.read_error_text(server, uri, err), vim.log.levels.ERROR, "kin: mcp")
    if cb then
      cb(nil, err)
    end
  end)
end

--- :KinResource {server} {uri}: the server's name, then the URI (the rest of the line); a
--- template's variables are asked for (M.fill) before it is opened.
function M.command(args)
  local server, uri = vim.trim(args or ""):match("^(%S+)%s+(.+)$")
  if not server then
    return service.notify("usage: :KinResource {server} {uri}", vim.log.levels.WARN)
  end
  uri = vim.trim(uri)
  if uri:find("{", 1, true) then
    -- A template: its variables are asked for first.
    return M.fill(server, uri, function(filled)
      if filled then
        M.open_resource(server, filled)
      end
    end)
  end
  M.open_resource(server, uri)
end

--- :KinResource completion: the listed servers, then that server's resources and templates (of
--- mcp/resources; the first completion fetches them).
function M.complete_command(arglead, cmdline)
  local st = M.state
  if not st.items then
    M.fetch()
    return {}
  end
  local words = vim.split(vim.trim(cmdline), "%s+")
  local typing_server = #words == 1 or (#words == 2 and arglead ~= "")
  local out, seen = {}, {}
  for _, it in ipairs(st.items) do
    local word = typing_server and it.server or (it.server == words[2] and it.uri)
    if word and not seen[word] and word:sub(1, #arglead) == arglead then
      seen[word] = true
      out[#out + 1] = word
    end
  end
  table.sort(out)
  return out
end

--- Call ids :KinSaw completes.
function M.call_ids()
  return vim.tbl_keys(M.state.saw)
end

return M
