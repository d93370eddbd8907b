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
      "review/finding",
    }
    for _, m in ipairs(handled) do
      t.ok(#payloads(m) > 0, m)
      t.ok(require("kin.service").handlers[m] ~= nil, "no handler for " .. m)
    end
  end)

  it("skills/list, trust/list and trust/revoke decode under PROTOCOL.md's names", function()
    for _, p in ipairs(payloads("skills/list")) do
      t.ok(#p.skills > 0 and p.skills[1].name and p.skills[1].source and p.skills[1].trusted ~= nil, "skills/list")
    end
    for _, p in ipairs(payloads("trust/list")) do
      t.ok(#p.entries > 0 and p.entries[1].id and p.entries[1].kind and p.entries[1].digest, "trust/list")
    end
    t.ok(#golden("trust/revoke") > 0, "trust/revoke")
  end)

  it("worktree/status, worktree/apply, worktree/remove and session/new's worktree decode under PROTOCOL.md's names", function()
    local wt = require("kin.worktree")
    local seen = 0
    for _, p in ipairs(payloads("session/new")) do
      if p.session.worktree then
        seen = seen + 1
        local line = wt.describe(p.session.worktree)
        has(line, p.session.worktree.path, "worktree path")
        has(line, p.session.worktree.branch, "worktree branch")
        has(line, p.session.worktree.baseBranch, "worktree base branch")
      end
    end
    t.ok(seen > 0, "a session/new with a worktree")
    for _, st in ipairs(payloads("worktree/status")) do
      local text = table.concat(wt.status_lines(st), "\n")
      has(text, st.branch, "status branch")
      has(text, st.path, "status path")
      for _, f in ipairs(st.files) do
        has(text, f.path, "status file")
        has(text, f.status, "status file status")
      end
    end
    local kinds = {}
    for _, m in ipairs({ "worktree/apply", "worktree/remove" }) do
      for _, fr in ipairs(golden(m)) do
        if fr.error then
          local e = wt.decode_error(fr.error)
          t.ok(e.kind ~= nil and #e.paths > 0, m .. " error data")
          kinds[#kinds + 1] = e.kind
        elseif fr.result and fr.result.files then
          t.ok(#fr.result.files > 0 and fr.result.files[1].path and fr.result.files[1].status, m .. " files")
        elseif fr.result then
          t.ok(fr.result.branch and fr.result.commit, m .. " result")
        end
      end
    end
    t.eq("conflict,unapplied", table.concat(kinds, ","), "the refusals' kinds")
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
      elseif p.items then
        -- A trust card shows every item: what it is, where, and a hook's whole command.
        for _, it in ipairs(p.items) do
          has(text, it.kind, what .. " item kind")
          has(text, it.path, what .. " item path")
          if it.name then
            has(text, it.name, what .. " item name")
          end
          if it.detail then
            has(text, it.detail, what .. " item detail")
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
      t.ok(not text:find(":%s+nil%f[^%w_]"), what .. ": a field it does not have is shown as nil")
      for _, f in ipairs(p.unsavedFiles or {}) do
        has(text, f, what .. " a file whose unsaved changes the command does not see")
      end
      if (p.revision or 0) > 0 then
        has(text, "kin updated this request", what .. " revision " .. p.revision)
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
    -- A request sent again with its requestId (a newer revision) replaces the one shown, and the
    -- answer names that revision.
    setup()
    local prompts = require("kin.prompts")
    local revised = vim.tbl_filter(function(p)
      return (p.revision or 0) > 0
    end, payloads("approval/request"))
    t.ok(#revised > 0, "a revised approval/request is recorded")
    local function first_shown(p, title)
      local c = vim.deepcopy(p)
      c.revision, c.title = nil, title
      return c
    end
    for _, p in ipairs(revised) do
      approval.request(first_shown(p, "the card first shown"))
      approval.request(p)
      approval.request(first_shown(p, "an older one, late"))
      local shown = vim.tbl_filter(function(it)
        return it.id == p.requestId
      end, prompts.items())
      t.eq(1, #shown, "one card for " .. p.requestId)
      t.eq(p.revision, shown[1].revision)
      has(t.panel_body(), p.title, "the revised card is the one shown")
    end
    local answers = vim.tbl_filter(function(m)
      return (m.params or {}).revision ~= nil
    end, golden("approval/respond"))
    t.ok(#answers > 0, "an approval/respond naming a revision is recorded")
  end)

  it("elicitation/request: each field is asked by its title, options titled as sent; a URL is shown", function()
    local el = require("kin.elicitation")
    for _, p in ipairs(payloads("elicitation/request")) do
      if p.mode == "form" then
        t.ok(#p.fields > 0, p.requestId)
        local view = table.concat(el.view({ params = p, state = {} }).lines, "\n")
        has(view, p.server or (p.source == "kin" and "kin"), p.requestId .. " server")
        local last = 0
        for i, f in ipairs(p.fields) do
          local prompt = el.field_prompt(p, f, i, #p.fields)
          t.eq(1, prompt:find(f.title, 1, true), f.name .. ": the prompt starts with the title")
          if f.description then
            has(prompt, f.description, f.name .. " description")
            has(view, f.description, f.name .. " description in kin's window")
          end
          local at = view:find("- " .. f.title .. " (", 1, true)
          t.ok(at and at > last, f.name .. ": in kin's order in kin's window")
          last = at or last
          if f.pattern then
            t.eq(false, el.pattern_matches(f.pattern, "not it"), f.name .. " pattern")
          end
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

  it("elicitation/respond: a refused answer's data names the fields to ask again", function()
    local el = require("kin.elicitation")
    local forms = {}
    for _, p in ipairs(payloads("elicitation/request")) do
      forms[p.requestId] = p
    end
    local seen = 0
    local asked = {}
    for _, fr in ipairs(golden("elicitation/respond")) do
      if fr.method then
        asked[fr.id] = fr.params.requestId
      elseif fr.error and fr.error.data then
        local p = forms[asked[fr.id]]
        local redo, lines = el.refused(p, fr.error)
        local want = {}
        for _, fe in ipairs(fr.error.data.fields) do
          want[#want + 1] = fe.name
        end
        t.eq(want, redo, "the fields to ask again")
        for i, fe in ipairs(fr.error.data.fields) do
          has(lines[i], fe.message, fe.name .. " problem")
        end
        seen = seen + 1
      end
    end
    t.ok(seen > 0, "a refused answer in the golden frames")
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
    -- A compaction that started: the title bar says "compacting" until its end's notice.
    local compacting = vim.tbl_filter(function(p)
      return p.source == "compacting"
    end, payloads("notice"))
    t.ok(#compacting > 0, "a compacting notice is recorded")
    for _, p in ipairs(compacting) do
      local tr = chat.transcript(p.sessionId)
      service.handlers["notice"](p)
      has(require("kin.status").text(tr), "compacting", "the title bar during a compaction")
      service.handlers["notice"](vim.tbl_extend("force", p, { source = "compaction" }))
      t.not_contains(require("kin.status").text(tr), "compacting", "after it")
    end
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
        elseif h.type == "turn" and h.status == "refused" then
          has(text, "the model refused", "refused turn")
        end
      end
    end
  end)

  it("review/start, review/finding and session/resume's findings: quickfix items and diagnostics on the lines", function()
    local review = require("kin.review")
    for _, r in ipairs(payloads("review/start")) do
      t.ok(r.turnId and r.root and #r.files > 0, "review/start result")
    end
    local found = payloads("review/finding")
    t.ok(#found > 0, "review/finding frames")
    for _, f in ipairs(found) do
      local q = review.qf_item(f)
      t.eq(q.filename, f.file, "quickfix file")
      t.eq(q.lnum, f.range.start.line + 1, "quickfix line")
      has(q.text, f.title, "quickfix text")
      local d = review.diagnostic(f)
      t.eq(d.lnum, f.range.start.line, "diagnostic line")
      t.eq(d.severity, vim.diagnostic.severity.ERROR, "severity " .. f.severity)
      has(d.message, f.body, "diagnostic body")
    end
    review.clear()
    local with = 0
    for _, r in ipairs(payloads("session/resume")) do
      if r.findings then
        with = with + 1
        review.on_resume(r)
        t.eq(#review.state.findings[r.session.sessionId], #r.findings, "findings kept from resume")
      end
    end
    t.ok(with > 0, "a session/resume frame with findings")
    t.wait_for(function() return #vim.fn.getqflist() > 0 end, "the quickfix list filled")
    local qf = vim.fn.getqflist({ title = 0, items = 0 })
    t.contains(qf.title, "kin review", "quickfix title")
    t.eq(#qf.items, 1, "quickfix items")
    local buf = vim.fn.bufnr(found[1].file)
    t.eq(#vim.diagnostic.get(buf, { namespace = review.ns }), 1, "diagnostic on the file's buffer")
    review.clear()
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
    -- An undo kin was stopped in (a history item with error) says it is unfinished, and why.
    local unfinished = 0
    for _, r in ipairs(payloads("session/resume")) do
      for _, h in ipairs(r.history) do
        if h.type == "undo" and h.undo and h.undo.error then
          unfinished = unfinished + 1
          local tr = transcript.new(r.session.sessionId)
          tr:history({ h })
          local text = tr:text_content()
          has(text, "[undo] turn " .. h.undo.turnId .. ": unfinished", "unfinished undo")
          has(text, h.undo.error, "why the undo is unfinished")
          t.not_contains(text, "restored 0 files", "an unfinished undo does not say it restored nothing")
        end
      end
    end
    t.ok(unfinished > 0, "a golden session/resume holds an unfinished undo item")
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
      -- What is offered before kin answers is kin's own list, as kin sends it.
      local own = vim.tbl_filter(function(c)
        return c.source == "kin"
      end, r.commands)
      t.eq(own, complete.KIN_COMMANDS, "kin's own commands, offered before commands/list answers")
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

  it("spend limits: the session's cost beside the gauge, usage/summary and the limit approval", function()
    setup()
    local chat = require("kin.chat")
    local service = require("kin.service")
    local status = require("kin.status")
    local usage = require("kin.usage")
    local priced = 0
    for _, p in ipairs(payloads("turn/usage")) do
      if p.currency then
        priced = priced + 1
        service.handlers["turn/usage"](p)
        local tr = chat.transcript(p.sessionId)
        has(status.text(tr), usage.format_cost(p.sessionCost, p.currency), "turn/usage sessionCost in the title bar")
        has(status.text(tr), status.tokens(p.contextTokens), "the context gauge beside it")
      end
    end
    t.ok(priced > 0, "a turn/usage frame with a cost")
    local scopes = {}
    for _, r in ipairs(payloads("usage/summary")) do
      scopes[r.scope] = true
      local text = table.concat(usage.summary_lines(r), "\n")
      has(text, usage.format_cost(r.cost, r.currency), "usage/summary " .. r.scope .. " cost")
      for _, l in ipairs(r.limits) do
        has(text, "limit " .. l.name .. ":", "usage/summary limit " .. l.name)
      end
    end
    t.ok(scopes.session and scopes.day, "usage/summary of a session and of the day")
    local approval = require("kin.approval")
    local limits = 0
    for _, p in ipairs(payloads("approval/request")) do
      if p.kind == "limit" then
        limits = limits + 1
        local text = table.concat(approval.preview_lines(p), "\n")
        has(text, "Spend limit", "the limit approval says what it is")
        local kinds = {}
        for _, o in ipairs(approval.choices(p)) do
          kinds[#kinds + 1] = o.optionId
        end
        t.eq({ "allow_once", "allow_always", "deny" }, kinds, "the limit's three choices, stop last")
      end
    end
    t.ok(limits > 0, "a limit approval frame")
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
      local instr = require("kin.mcpinstr")
      for _, r in ipairs(l.servers) do
        if r.instructions then
          local shown = table.concat(instr.lines(r), "\n")
          has(shown, r.instructions, "instructions of " .. r.name)
          has(shown, r.instructionsHash, "instructionsHash of " .. r.name)
          if r.instructionsPending then
            has(mcp.format_row({ kind = "server", row = r }), "instructions changed", "pending instructions of " .. r.name)
          end
        end
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


  it("mcp/resources, completion/complete, mcp/resourceUpdated, links and modelSaw decode and show", function()
    require("kin")
    local res = require("kin.resources")
    res.reset()
    local list = payloads("mcp/resources")
    t.ok(#list > 0, "mcp/resources frames")
    local items, servers = res.rows(list[1])
    t.ok(#items > 0, "resources listed")
    for _, it in ipairs(items) do
      t.ok(servers[it.server], "server " .. it.server)
    end
    res.state.items, res.state.servers = items, servers
    local first = list[1].servers[1]
    local word = "@" .. first.server .. ":" .. first.resources[1].uri
    local found = false
    for _, c in ipairs(res.complete(first.server)) do
      found = found or c.word == word
    end
    t.ok(found, "@ completion offers " .. word)
    local part = res.part(first.server .. ":" .. first.resources[1].uri)
    t.eq({ type = "resource", server = first.server, uri = first.resources[1].uri }, part, "the mention's part")
    t.eq(nil, res.part("ghost:notes://x"), "an unlisted server is not a resource")
    -- A template's variable completed: the request this plugin builds for the question is
    -- the recorded one, and the values it offers are the result's.
    local asked = 0
    for _, fr in ipairs(golden("completion/complete")) do
      if fr.method then
        asked = asked + 1
        local p = fr.params
        local q = { server = p.server, template = p.ref.uri, name = p.argument.name, context = p.context and p.context.arguments }
        t.eq(p, res.complete_params(q, p.argument.value), "completion/complete params")
        t.eq(res.template_vars(p.ref.uri)[vim.tbl_count(q.context or {}) + 1], p.argument.name, "the variable asked after the context's")
      elseif fr.result then
        t.ok(#fr.result.completion.values > 0, "completion values")
        t.eq(fr.result.completion.values, res.complete_values(fr.result), "the values offered")
      end
    end
    t.ok(asked > 0, "completion/complete requests")
    local upd = payloads("mcp/resourceUpdated")
    t.ok(#upd > 0 and upd[1].server and upd[1].uri, "mcp/resourceUpdated")
    t.ok(require("kin.service").handlers["mcp/resourceUpdated"] ~= nil, "no handler for mcp/resourceUpdated")
    local saw_calls = 0
    for _, p in ipairs(payloads("turn/toolCall")) do
      if p.modelSaw then
        saw_calls = saw_calls + 1
        local text = table.concat(res.saw_lines(p), "\n")
        has(text, p.modelSaw.text:match("[^\n]+") or p.modelSaw.text, "modelSaw text of " .. p.callId)
        if p.modelSaw.framing then
          has(text, p.modelSaw.framing, "framing of " .. p.callId)
        end
        for _, c in ipairs(p.modelSaw.cuts or {}) do
          has(text, c.why, "cut of " .. p.callId)
        end
        for _, l in ipairs(p.links or {}) do
          has(text, l.uri, "link of " .. p.callId)
        end
      end
    end
    t.ok(saw_calls > 0, "turn/toolCall frames with modelSaw")
  end)

  it("mcp/readResource: a link opened shows the text and what was cut; a refusal names the server", function()
    -- The frames come with kin's mcp/readResource; until they are recorded there is nothing to read.
    if vim.fn.filereadable(golden_dir .. "/mcp_readResource.json") == 0 then
      return t.skip_case("no golden frames for mcp/readResource yet")
    end
    local res = require("kin.resources")
    local frames = golden("mcp/readResource")
    local asked, results, errors = {}, 0, 0
    for _, fr in ipairs(frames) do
      if fr.method then
        t.ok(fr.params.server and fr.params.uri, "mcp/readResource params")
        asked[fr.id] = fr.params
      elseif fr.result then
        results = results + 1
        local r = fr.result
        t.eq(asked[fr.id].server, r.server, "the result names the server asked")
        t.eq(asked[fr.id].uri, r.uri, "the result names the URI asked")
        local text = table.concat(res.resource_lines(r), "\n")
        has(text, r.text, "text of " .. r.uri)
        for _, c in ipairs(r.cuts or {}) do
          has(text, c.why, "cut of " .. r.uri)
          has(text, c.what, "what was cut of " .. r.uri)
        end
      elseif fr.error then
        errors = errors + 1
        local p = asked[fr.id]
        local text = res.read_error_text(p.server, p.uri, fr.error)
        has(text, p.server, "the refusal names the server")
        has(text, fr.error.message, "kin's reason")
      end
    end
    t.ok(results > 0 and errors > 0, "a result and a refusal recorded")
  end)

  it("mcp/acceptInstructions: the hash shown is the one sent, the answer read as sent", function()
    local accepts = golden("mcp/acceptInstructions")
    local fake = setup()
    local sent
    fake.handlers["mcp/acceptInstructions"] = function(params)
      sent = params
      return accepts[#accepts].result
    end
    local row = { name = accepts[#accepts - 1].params.name, instructionsHash = accepts[#accepts - 1].params.hash }
    local got
    require("kin.mcpinstr").accept(row, function(r)
      got = r
    end)
    t.wait_for(function()
      return got ~= nil
    end, "mcp/acceptInstructions answered")
    t.eq(accepts[#accepts - 1].params.hash, sent.hash, "the hash shown is the one sent")
    t.eq(true, got.accepted, "accepted")
  end)

  it("put every subagent frame in its parent's transcript: its approval labelled, its progress under the delegate call", function()
    setup()
    require("fake_kin").wait_ready()
    local service = require("kin.service")
    local chat = require("kin.chat")
    local subagents = require("kin.subagents")
    subagents.reset()
    local function nested(method)
      local out = {}
      for _, p in ipairs(payloads(method)) do
        if p.parentSessionId then
          out[#out + 1] = p
        end
      end
      return out
    end
    local approvals = nested("approval/request")
    t.ok(#approvals > 0, "a subagent approval/request frame")
    local parent, child = approvals[1].parentSessionId, approvals[1].sessionId
    local delegates = {}
    for _, p in ipairs(payloads("turn/toolCall")) do
      if p.sessionId == parent and p.subagent and p.subagent.sessionId == child then
        delegates[#delegates + 1] = p
      end
    end
    t.ok(#delegates >= 2, "the delegate call, running and final")
    local tr = chat.transcript(parent)
    service.handlers["turn/started"]({ sessionId = parent, turnId = delegates[1].turnId, input = "delegate it" })
    service.handlers["turn/toolCall"](delegates[1])
    for _, m in ipairs({ "turn/started", "turn/delta", "turn/toolCall" }) do
      for _, p in ipairs(nested(m)) do
        service.handlers[m](p)
      end
    end
    for _, p in ipairs(approvals) do
      service.handlers["approval/request"](p)
      local q
      for _, it in ipairs(require("kin.prompts").items()) do
        if it.id == p.requestId then
          q = it
        end
      end
      t.ok(q and q.title:find("^%[subagent"), "approval " .. p.requestId .. " labelled as the subagent's")
      t.eq(1, subagents.views[child].waiting, "counted as waiting")
    end
    for _, p in ipairs(nested("approval/resolved")) do
      service.handlers["approval/resolved"](p)
    end
    t.eq(0, subagents.views[child].waiting, "resolved")
    for _, m in ipairs({ "turn/usage", "turn/completed" }) do
      for _, p in ipairs(nested(m)) do
        service.handlers[m](p)
      end
    end
    service.handlers["turn/toolCall"](delegates[#delegates])
    local text = table.concat(vim.api.nvim_buf_get_lines(tr.buf, 0, -1, false), "\n")
    has(text, "↳ subagent completed", "the subagent's summary under the delegate call")
    for _, p in ipairs(nested("turn/toolCall")) do
      has(text, "- " .. (p.title or p.name), "the subagent's call " .. p.callId)
    end
    for _, p in ipairs(nested("turn/delta")) do
      has(text, "┊ " .. vim.split(p.text, "\n")[1], "the subagent's answer")
    end
    t.eq(nil, chat.state.transcripts[child], "no transcript of the subagent's own")
    t.eq(1, select(2, text:gsub("## You", "")), "the subagent's question is not a turn of the parent's")
  end)

  it("turn/steered, turn/rollback, session/fork and their history items decode under PROTOCOL.md's names", function()
    local transcript = require("kin.transcript")
    local branching = require("kin.branching")
    require("kin")
    t.ok(require("kin.service").handlers["turn/steered"] ~= nil, "no handler for turn/steered")
    for _, p in ipairs(payloads("turn/steered")) do
      local tr = transcript.new(p.sessionId)
      branching.show_steer(tr, p.input)
      has(tr:text_content(), p.input, "steered words")
    end
    for _, r in ipairs(payloads("turn/rollback")) do
      local tr = transcript.new("s_rollback")
      branching.show_rollback(tr, r)
      local text = tr:text_content()
      has(text, r.turns[1], "rolled-back turn")
      for _, u in ipairs(r.undos) do
        for _, f in ipairs(u.restored or {}) do
          has(text, f, "restored file")
        end
      end
    end
    for _, r in ipairs(payloads("session/fork")) do
      t.ok(r.session and r.session.sessionId and r.forkedFrom and r.forkedFrom.sessionId, "session/fork result")
    end
    local seen = {}
    for _, r in ipairs(payloads("session/resume")) do
      local tr = transcript.new(r.session.sessionId)
      tr:history(r.history)
      local text = tr:text_content()
      for _, it in ipairs(r.history) do
        if it.type == "steer" then
          seen.steer = true
          has(text, it.text, "steer item")
        elseif it.type == "rollback" then
          seen.rollback = true
          has(text, it.rollback.turns[1], "rollback item")
        elseif it.rolledBack and it.type == "user" then
          seen.marked = true
          t.contains(text, "taken back by a rollback", "a rolled-back question is marked")
        end
      end
    end
    t.ok(seen.steer and seen.rollback and seen.marked, "the history frames hold steer, rollback and marked items")
  end)

  it("a rollback's errors (a fork's copied turn, a rollback kin was stopped in) are shown to the person with their turns", function()
    local transcript = require("kin.transcript")
    local branching = require("kin.branching")
    require("kin")
    local function shown(text, e, what)
      has(text, e.turnId, what .. ": the turn of an error")
      has(text, e.error, what .. ": the error")
    end
    local results = 0
    for _, r in ipairs(payloads("turn/rollback")) do
      if r.errors and #r.errors > 0 then
        results = results + 1
        local tr = transcript.new("s_rollback_errors")
        branching.show_rollback(tr, r)
        local text = tr:text_content()
        for _, e in ipairs(r.errors) do
          shown(text, e, "turn/rollback")
        end
      end
    end
    t.ok(results > 0, "a golden turn/rollback result has errors")
    local items = 0
    for _, r in ipairs(payloads("session/resume")) do
      local tr = transcript.new(r.session.sessionId)
      tr:history(r.history)
      local text = tr:text_content()
      for _, it in ipairs(r.history) do
        if it.type == "rollback" and it.rollback.errors and #it.rollback.errors > 0 then
          items = items + 1
          for _, e in ipairs(it.rollback.errors) do
            shown(text, e, "history rollback item")
          end
        end
      end
    end
    t.ok(items > 0, "a golden session/resume holds a rollback item with errors")
  end)
end)
