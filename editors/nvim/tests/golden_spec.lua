-- Every frame kin's server recorded in rpc/testdata/golden, read as this plugin reads the wire:
-- through its own handlers and renderers (the approval preview and choices, the elicitation
-- prompts and options, the chat transcript, the :KinMcp rows, :KinGrants and :KinSessions). Each
-- check takes what the frame says under the names PROTOCOL.md gives and looks for it in what the
-- plugin shows, so a field renamed on either side fails here.
local t = require("harness")

local root = vim.env.KIN_TEST_ROOT or vim.fn.getcwd()
local golden_dir = vim.fs.normalize(root .. "/../../rpc/testdata/golden")

local function golden(method)
  local name = method:gsub("%$", ""):gsub("/", "_") .. ".json"
  local f = assert(io.open(golden_dir .. "/" .. name, "r"), "no golden frames for " .. method)
  local doc = vim.json.decode(f:read("*a"), { luanil = { object = true, array = true } })
  f:close()
  return doc.frames
end

-- The params of a notification's frames, or the results of a request's.
local function payloads(method)
  local out = {}
  for _, fr in ipairs(golden(method)) do
    if fr.result ~= nil then
      out[#out + 1] = fr.result
    elseif fr.method and fr.id == nil then
      out[#out + 1] = fr.params
    end
  end
  return out
end

local function has(text, needle, what)
  t.ok(type(needle) == "string" and needle ~= "", what .. ": the frame has no such field")
  t.contains(text, needle, what)
end

local function setup()
  local fake = require("fake_kin").new()
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  return fake
end

describe("golden frames", function()
  it("cover what this plugin handles", function()
    require("kin")
    local files = vim.fn.glob(golden_dir .. "/*.json", false, true)
    t.ok(#files > 30, "golden frames in " .. golden_dir)
    local handled = {
      "turn/started", "turn/delta", "turn/toolCall", "turn/completed", "approval/request", "approval/resolved",
      "elicitation/request", "elicitation/resolved", "mcp/status", "notice", "log/message",
      "turn/plan", "commands/changed", "workspace/didChangeFiles", "turn/reasoning", "turn/usage",
    }
    for _, m in ipairs(handled) do
      t.ok(#payloads(m) > 0, m)
      t.ok(require("kin.service").handlers[m] ~= nil, "no handler for " .. m)
    end
  end)

  it("approval/request: the preview shows what would happen, the choices are kin's options, refusal last", function()
    local approval = require("kin.approval")
    for _, p in ipairs(payloads("approval/request")) do
      local text = table.concat(approval.preview_lines(p), "\n")
      local what = "approval " .. p.requestId
      has(text, p.title, what .. " title")
      if p.kind == "server_launch" then
        has(text, p.server, what .. " server")
        has(text, p.transport, what .. " transport")
        has(text, p.destination, what .. " destination")
        has(text, p.scope, what .. " scope")
        if p.arguments then
          has(text, p.arguments, what .. " env and header names")
        end
      elseif p.command then
        has(text, p.command, what .. " command")
        has(text, p.cwd, what .. " cwd")
        if p.sandbox then
          has(text, require("kin.approval").sandbox_text(p.sandbox), what .. " sandbox")
          for _, w in ipairs(p.sandbox.writable or {}) do
            has(text, w, what .. " writable folder")
          end
        end
      elseif p.server then
        has(text, p.server, what .. " server")
        has(text, p.destination, what .. " destination")
        has(text, p.tool, what .. " tool")
      elseif p.diffs then
        has(text, p.diffs[1].unified:match("[^\n]+"), what .. " diff")
      end
      if p.warning then
        has(text, p.warning, what .. " warning")
      end
      local names, sent = {}, {}
      for _, o in ipairs(approval.choices(p)) do
        names[#names + 1] = o.name
      end
      for _, o in ipairs(p.options) do
        sent[#sent + 1] = o.name
      end
      table.sort(sent)
      local sorted = vim.deepcopy(names)
      table.sort(sorted)
      t.eq(sent, sorted, what .. ": the choices are not kin's options")
      t.eq("reject_once", approval.choices(p)[#names].kind, what .. ": the refusal is not last")
    end
  end)

  it("elicitation/request: each field is asked by its title, options titled as sent; a URL is shown", function()
    local el = require("kin.elicitation")
    for _, p in ipairs(payloads("elicitation/request")) do
      if p.mode == "form" then
        t.ok(#p.fields > 0, p.requestId)
        for _, f in ipairs(p.fields) do
          local prompt = el.field_prompt(p, f)
          has(prompt, p.server or (p.source == "kin" and "kin"), f.name .. " server")
          has(prompt, f.title, f.name .. " title")
          if f.type == "enum" or f.type == "multi_select" then
            local labels = {}
            for _, it in ipairs(el.choice_items(f)) do
              labels[#labels + 1] = it.label
            end
            t.eq(f.enumNames or f.enum, labels, f.name .. " options")
          end
        end
      else
        local view = el.view({ params = p, state = {} })
        local text = table.concat(view.lines, "\n")
        has(text, p.url, "url")
        has(text, p.server, "server")
        has(text, p.message, "message")
        t.eq("d", view.choices[#view.choices].key, "decline is d, last")
      end
    end
  end)

  it("turn notifications and notices land in the session's transcript", function()
    setup()
    local chat = require("kin.chat")
    local service = require("kin.service")
    local session = payloads("session/new")[1].session.sessionId
    for _, m in ipairs({ "turn/started", "turn/delta", "turn/toolCall", "notice", "turn/completed" }) do
      for _, p in ipairs(payloads(m)) do
        service.handlers[m](p)
      end
    end
    local text = chat.transcript(session):text_content()
    -- Frames of other sessions (the golden recording has several) land elsewhere.
    for _, p in ipairs(payloads("turn/started")) do
      if p.sessionId == session then
        has(text, p.input, "turn/started input")
      end
    end
    for _, p in ipairs(payloads("turn/delta")) do
      if p.sessionId == session then
        has(text, p.text, "turn/delta text")
      end
    end
    local final = {}
    for _, p in ipairs(payloads("turn/toolCall")) do
      if p.sessionId == session then
        final[p.callId] = p
      end
    end
    for _, p in pairs(final) do
      has(text, require("kin.transcript").tool_line(p.name, p.title, p.status), "turn/toolCall " .. p.callId)
    end
    for _, p in ipairs(payloads("turn/completed")) do
      if p.status == "failed" and p.sessionId == session then
        has(text, p.error, "turn/completed error")
      end
    end
    for _, p in ipairs(payloads("notice")) do
      if p.sessionId == session then
        has(text, p.message, "notice")
      end
    end
  end)

  it("session/resume: every history item is redrawn", function()
    setup()
    local transcript = require("kin.transcript")
    for _, r in ipairs(payloads("session/resume")) do
      local tr = transcript.new(r.session.sessionId)
      tr:history(r.history)
      local text = tr:text_content()
      for _, h in ipairs(r.history) do
        if h.type == "user" or h.type == "assistant" then
          has(text, h.text, h.type)
        elseif h.type == "toolCall" then
          has(text, transcript.tool_line(h.name, h.title, h.status), "toolCall " .. h.callId)
        elseif h.type == "decision" then
          has(text, h.title or (h.approved and h.approved.title), "decision " .. tostring(h.requestId))
          has(text, (h.decision:gsub("_", " ")), "decision " .. tostring(h.requestId))
        elseif h.type == "elicitation" then
          has(text, "[" .. (h.server or (h.source == "kin" and "kin")) .. " asked] " .. h.title, "elicitation " .. h.requestId)
        elseif h.type == "turn" and h.status == "failed" then
          has(text, h.error, "turn error")
        end
      end
    end
  end)

  it("turn/plan, turn/undo, session/configure and commands/list: shown as kin sends them", function()
    local transcript = require("kin.transcript")
    local chat = require("kin.chat")
    for _, p in ipairs(payloads("turn/plan")) do
      local tr = transcript.new(p.sessionId)
      tr:plan(p)
      local text = tr:text_content()
      for _, e in ipairs(p.entries) do
        has(text, e.content, "plan step")
      end
      t.contains(text, "- [x] ", "a completed step")
      t.contains(text, "- [~] ", "a step in progress")
    end
    for _, r in ipairs(payloads("turn/undo")) do
      local tr = transcript.new("s_undo")
      tr:undo(r)
      local text = tr:text_content()
      has(text, r.turnId, "undo turn")
      for _, f in ipairs(r.restored or {}) do
        has(text, f, "restored file")
      end
    end
    for _, r in ipairs(payloads("session/configure")) do
      local tr = transcript.new(r.sessionId)
      chat.apply_config(tr, r)
      has(require("kin.status").text(tr), r.mode, "mode in the title bar")
    end
    local complete = require("kin.complete")
    for _, r in ipairs(payloads("commands/list")) do
      complete.state.commands = r.commands
      complete.state.for_session = "s_golden"
      chat.state.current = "s_golden"
      local words = {}
      for _, it in ipairs(complete.omnifunc(0, "/")) do
        words[#words + 1] = it.word
      end
      for _, c in ipairs(r.commands) do
        t.ok(vim.tbl_contains(words, "/" .. c.name .. " "), "command /" .. c.name .. " offered")
      end
    end
  end)

  it("turn/reasoning, turn/usage, models/list and workspace/applyEdit: read as kin sends them", function()
    setup()
    local chat = require("kin.chat")
    local service = require("kin.service")
    local status = require("kin.status")
    for _, m in ipairs({ "turn/reasoning", "turn/usage" }) do
      for _, p in ipairs(payloads(m)) do
        service.handlers[m](p)
      end
    end
    for _, p in ipairs(payloads("turn/reasoning")) do
      has(chat.transcript(p.sessionId):text_content(), vim.trim(p.text), "turn/reasoning text")
    end
    local usage = payloads("turn/usage")
    local last = usage[#usage]
    has(status.gauge(chat.transcript(last.sessionId).usage), status.tokens(last.contextTokens) .. "/" .. status.tokens(last.contextWindow), "turn/usage gauge")
    for _, r in ipairs(payloads("models/list")) do
      for _, m in ipairs(r.models) do
        local row = require("kin").format_model(m)
        has(row, m.id, "model id")
        has(row, status.tokens(m.contextWindow) .. " context", "model " .. m.id .. " window")
      end
    end
    -- kin's edit of an open buffer, at the version it names: applied where its range says.
    local documents = require("kin.documents")
    for _, fr in ipairs(golden("workspace/applyEdit")) do
      if fr.method then
        local dc = fr.params.edit.documentChanges[1]
        local e = dc.edits[1]
        local buf = vim.api.nvim_create_buf(true, false)
        vim.api.nvim_buf_set_name(buf, vim.uri_to_fname(dc.textDocument.uri))
        local lines = {}
        for i = 1, e.range["end"].line + 1 do
          lines[i] = "line " .. i
        end
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
        documents.state.docs[buf] = { uri = dc.textDocument.uri, version = dc.textDocument.version, lines = lines }
        local r = documents.apply_edit(fr.params)
        t.eq(true, r.applied, "workspace/applyEdit " .. fr.params.callId .. ": " .. tostring(r.failureReason))
        t.eq((e.newText:gsub("\n$", "")), vim.api.nvim_buf_get_lines(buf, e.range.start.line, e.range.start.line + 1, false)[1])
        documents.state.docs[buf] = nil
        vim.api.nvim_buf_delete(buf, { force = true })
      end
    end
  end)

  it(":KinMcp, :KinGrants and :KinSessions show every row kin lists", function()
    local mcp = require("kin.mcp")
    for _, l in ipairs(payloads("mcp/list")) do
      local shown = {}
      for _, it in ipairs(mcp.items(l)) do
        shown[#shown + 1] = mcp.format_row(it)
      end
      local text = table.concat(shown, "\n")
      for _, group in ipairs({ l.servers, l.foreign, l.shadowed or {} }) do
        for _, r in ipairs(group) do
          has(text, r.name .. "  [", "mcp row " .. r.name)
        end
      end
      for _, w in ipairs(l.warnings) do
        t.eq(w, mcp.warning_text(w), "warnings are shown as sent")
      end
    end
    for _, r in ipairs(payloads("grants/list")) do
      for _, g in ipairs(r.grants) do
        local line = require("kin.grants").format(g)
        has(line, g.label, "grant label")
        has(line, g.type, "grant type")
      end
    end
    local fake = setup()
    local list = payloads("session/list")
    fake.handlers["session/list"] = function()
      return list[#list]
    end
    t.script_select({ false })
    require("kin").sessions(true)
    t.wait_for(function()
      return #t.selects == 1
    end, "the sessions picker")
    for _, s in ipairs(list[#list].sessions) do
      has(table.concat(t.selects[1].labels, "\n"), s.title, "session " .. s.sessionId)
    end
  end)
end)
