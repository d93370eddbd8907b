-- The conversation's features (issue 14) used from Neovim against the real kin and the scripted
-- mock model (tests/rules.json): models and efforts from models/list, reasoning summaries, the
-- context gauge, compaction, project instructions, and context a question attaches (kin reads
-- the buffer, not the file). conversation_spec.lua pins the same shapes against the fake kin.
local t = require("harness")

local kin = require("realkin")
kin.need_kin()

local env = {}

before_each(function()
  kin.fresh(env)
  vim.fn.writefile({ "alpha", "gamma" }, env.ws .. "/notes.txt")
  kin.setup(env)
end)

local tr, text, turn_over, traced, ask_and_wait, winbar = kin.current, kin.text, kin.turn_over, kin.traced, kin.ask_and_wait, kin.winbar

-- Whether the chat window has a closed fold starting at the (last) line that reads line.
local function folded_at(line)
  local win = require("kin.chat").state.win
  local row
  for i, l in ipairs(vim.api.nvim_buf_get_lines(tr().buf, 0, -1, false)) do
    if l == line then
      row = i
    end
  end
  return row ~= nil and vim.fn.win_execute(win, "echo foldclosed(" .. row .. ")"):match("%d+") == tostring(row)
end

-- Restarts kin; the chat re-attaches the current session by itself (session/resume) and
-- redraws it from kin's history.
local function restart_and_resume()
  local chat = require("kin.chat")
  local sid = chat.state.current
  local first = require("kin").pid()
  vim.cmd("KinRestart")
  t.wait_for(function()
    return require("kin").pid() ~= first and #traced("->", "session/resume") == 1 and not chat.state.stale[sid]
  end, "the session re-attached", 60000)
end

-- Records what the title bar says kin is doing ("thinking", "compacting", ...) each time it is
-- redrawn for a change, from now on.
local function record_winbar()
  local status = require("kin.status")
  local seen = {}
  local refresh = status.refresh
  status.refresh = function(...)
    local a = status.activity(tr())
    local doing = a and a:match("^%S+ (%a+)")
    if doing and seen[#seen] ~= doing then
      seen[#seen + 1] = doing
    end
    return refresh(...)
  end
  return seen
end

describe("the conversation with the real kin", function()
  it("during a turn, :KinModel says the model changes between turns; a cancel keeps the gauge", function()
    ask_and_wait("hello there")
    local before = tr().usage.contextTokens
    t.ok(before > 0, "the gauge after a turn")
    require("kin").ask("please wait for me")
    t.wait_for(function()
      return tr().running and text():find("please wait for me", 1, true)
    end, "the turn to start")
    t.capture_notify()
    t.script_select({})
    vim.cmd("KinModel")
    t.contains(t.notes_text(), "kin changes the model between turns")
    t.eq(0, #t.selects, "no picker offers a choice that cannot be applied")
    t.eq(0, #traced("->", "models/list") + #traced("->", "session/configure"))
    vim.cmd("KinCancel")
    t.wait_for(turn_over, "the cancelled turn to end", 60000)
    t.contains(text(), "_(cancelled")
    local done = traced("<-", "turn/completed")
    t.ok(done[#done].params.usage.contextTokens > 0, "kin counts the conversation after a cancel")
    t.ok(tr().usage.contextTokens >= before, "the gauge does not drop to 0: " .. winbar())
    t.not_contains(winbar(), " 0/")
  end)

  it(":KinModel picks a model and an effort from kin's models/list; the next turn uses that model", function()
    vim.fn.writefile({ vim.json.encode({
      model = "mock-big",
      models = {
        { id = "mock-big", name = "Mock Big", contextWindow = 400000, efforts = { "low", "medium", "high" } },
        { id = "mock-small", contextWindow = 8000, api = "chat", images = false },
      },
    }) }, env.home .. "/settings.json")
    ask_and_wait("hello big")
    t.eq("mock-big", tr().model)
    t.contains(winbar(), "/400k")
    t.script_select({ "mock-big", "high" })
    vim.cmd("KinModel")
    t.wait_for(function()
      return tr().effort == "high"
    end, "effort high")
    t.contains(t.selects[1].labels[1], "mock-big — Mock Big  (400k context, effort low/medium/high, images)")
    t.contains(t.selects[1].labels[2], "mock-small  (8k context)")
    t.contains(winbar(), "mock-big (high)")
    t.contains(text(), "[model] mock-big (high)")
    -- A Chat Completions model with a small window: the gauge follows the model kin used.
    vim.cmd("KinModel mock-small")
    t.wait_for(function()
      return tr().model == "mock-small"
    end, "model mock-small")
    t.eq(nil, tr().effort, "mock-small takes no effort")
    -- The gauge measures against the new model's window at once, not at the next turn.
    t.wait_for(function()
      return winbar():find("/8k", 1, true)
    end, "the gauge of mock-small's window: " .. winbar())
    ask_and_wait("hello small")
    t.contains(text(), "Hello from the mock.")
    t.contains(winbar(), "/8k")
    -- An effort the model does not take is kin's error, and nothing changes.
    t.capture_notify()
    vim.cmd("KinModel mock-small high")
    t.wait_for(function()
      return t.notes_text():find("effort", 1, true)
    end, "kin's refusal")
    t.eq("mock-small", tr().model)
    restart_and_resume()
    t.eq("mock-small", tr().model)
    t.contains(text(), "[model] mock-small")
    -- The choice survives a restart: the next turn runs on mock-small's 8k window.
    ask_and_wait("hello after restart")
    local usages = traced("<-", "turn/usage")
    t.eq(8000, usages[#usages].params.contextWindow, "the new kin used mock-small")
    -- /model, run by kin, changes what the title bar shows too.
    require("kin").ask("/model mock-big low")
    t.wait_for(function()
      return tr().model == "mock-big" and tr().effort == "low"
    end, "/model's configuration", 60000)
    t.contains(winbar(), "mock-big (low)")
    t.contains(text(), "Model: mock-big (effort low)")
  end)

  it("reasoning streams into a folded, dimmed block; the gauge shows turn/usage; both come back on resume", function()
    ask_and_wait("please think")
    t.ok(#traced("<-", "turn/reasoning") >= 1, "kin streamed the reasoning")
    t.ok(#traced("<-", "turn/usage") >= 1, "kin sent the usage")
    local body = text()
    t.contains(body, "_reasoning_ (3 lines)\n  ┊ **Checking notes**\n  ┊ \n  ┊ Two lines, both short.\n\nThought it through.")
    t.ok(folded_at("  ┊ **Checking notes**"), "folded")
    local marks = vim.api.nvim_buf_get_extmarks(tr().buf, require("kin.transcript").dim_ns, 0, -1, {})
    t.eq(4, #marks, "the reasoning is dimmed")
    local usage = traced("<-", "turn/usage")[1].params
    t.contains(winbar(), require("kin.status").gauge(usage))
    t.ok(usage.contextTokens > 0 and usage.contextWindow > 0, vim.inspect(usage))
    restart_and_resume()
    t.contains(text(), "_reasoning_ (3 lines)\n  ┊ **Checking notes**")
    t.ok(folded_at("  ┊ **Checking notes**"), "folded when redrawn from history")
    t.contains(winbar(), "ctx ")
  end)

  it(":KinCompact has kin summarise the conversation; the summary is in the transcript, folded, also after resume", function()
    ask_and_wait("hello there")
    local bars = record_winbar()
    vim.cmd("KinCompact")
    local summary = "[compacted: requested] the model goes on from this summary and the recent turns\n  │ ## Asked\n  │ A greeting."
    t.wait_for(function()
      return text():find(summary, 1, true)
    end, "the summary in the transcript", 60000)
    t.eq(1, #traced("->", "session/compact"))
    t.ok(vim.tbl_contains(bars, "compacting"), "the title bar said compacting: " .. vim.inspect(bars))
    t.wait_for(function()
      return not winbar():find("compacting", 1, true)
    end, "the title bar after the compaction")
    t.ok(folded_at("  │ ## Asked"), "the summary is folded")
    t.ok(#traced("<-", "notice") > 0, "kin's notice")
    restart_and_resume()
    local _, n = text():gsub(vim.pesc(summary), "")
    t.eq(1, n, "redrawn once from history:\n" .. text())
    t.ok(folded_at("  │ ## Asked"), "folded when redrawn from history")
    -- And the conversation goes on.
    ask_and_wait("hello again")
    t.contains(text(), "Hello from the mock.")
  end)

  it("a compaction kin makes by itself when the window fills shows its summary, folded", function()
    -- How much one turn takes (kin's prompt, the question, the answer), measured, so the window
    -- below is passed by the second question of a session and not by the first.
    local pad = (" padding"):rep(300) -- about 600 tokens
    ask_and_wait("hello there" .. pad)
    local usages = traced("<-", "turn/usage")
    local one = usages[#usages].params.contextTokens
    t.ok(one > 0, "usage of one turn")
    vim.fn.writefile({ vim.json.encode({
      model = "mock-tiny",
      compactThreshold = 0.5,
      models = { { id = "mock-tiny", contextWindow = 2 * (one + 300) } },
    }) }, env.home .. "/settings.json")
    vim.cmd("KinRestart")
    vim.cmd("KinNew")
    ask_and_wait("hello one" .. pad)
    t.eq("mock-tiny", tr().model)
    t.not_contains(text(), "[compacted")
    local bars = record_winbar()
    ask_and_wait("hello two" .. pad)
    t.wait_for(function()
      return text():find("[compacted: auto]", 1, true)
    end, "the automatic compaction's summary", 60000)
    -- While kin summarised, the title bar said so (not "thinking").
    t.ok(vim.tbl_contains(bars, "compacting"), "the title bar said compacting: " .. vim.inspect(bars))
    t.ok(folded_at("  │ ## Asked"), "folded")
    -- Where kin said it, in the turn it made room for: after the question, before its answer.
    local body = text()
    local q = body:find("hello two", 1, true)
    local c = body:find("[compacted: auto]", 1, true)
    local a = body:find("Hello from the mock.", c or 1, true)
    t.ok(q and c and a and q < c and c < a, "question, summary, answer:\n" .. body)
  end)

  it("shows the project instructions in force, and says when they changed", function()
    vim.fn.writefile({ "Answer in English." }, env.ws .. "/AGENTS.md")
    -- The repository's instructions reach the model once the person trusts them (kin asks).
    require("kin").ask("hello there")
    t.wait_panel("Trust")
    -- The real kin's card names what is trusted: the file, as an instruction file, and no field
    -- it does not have.
    local card = t.panel_body()
    t.contains(card, "AGENTS.md")
    t.contains(card, "instructions")
    t.ok(not card:find("nil", 1, true), "a field shown as nil:\n" .. card)
    t.press("t")
    t.wait_for(function()
      return text():find("hello there", 1, true) and turn_over()
    end, "the turn of hello there to end", 60000)
    -- Trusted during the turn: they came into force then, and the transcript says so.
    t.contains(text(), "The project's instructions changed (AGENTS.md)")
    vim.fn.writefile({ "Answer in English, briefly." }, env.ws .. "/AGENTS.md")
    ask_and_wait("hello again")
    local _, n = text():gsub("The project's instructions changed %(AGENTS.md%)", "")
    t.eq(2, n, "a changed instruction file is named again")
  end)

  it("an @file mention sends the open buffer's unsaved text, and the transcript says what was attached", function()
    vim.cmd("edit " .. vim.fn.fnameescape(env.ws .. "/notes.txt"))
    vim.api.nvim_buf_set_lines(0, 1, 2, false, { "zebra-77" })
    t.eq(true, vim.bo.modified)
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "what is in @notes.txt" })
    chat.send_input()
    t.wait_for(function()
      return text():find("kin read your unsaved buffer", 1, true) and turn_over()
    end, "the model's answer about the buffer", 60000)
    local input = traced("->", "turn/start")[1].params.input
    t.eq({ type = "file", path = "notes.txt" }, input[2])
    t.contains(text(), "what is in @notes.txt\n\n> attached: file notes.txt (")
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"), "the file on disk is untouched")
  end)

  it(":KinAttach diagnostics sends the buffer's problems, and kin takes them", function()
    vim.cmd("edit " .. vim.fn.fnameescape(env.ws .. "/notes.txt"))
    local buf = vim.api.nvim_get_current_buf()
    vim.diagnostic.set(vim.api.nvim_create_namespace("kin_test"), buf, {
      { lnum = 1, col = 0, end_lnum = 1, end_col = 5, severity = vim.diagnostic.severity.ERROR, message = "zebra-77 expected here", source = "lint" },
    })
    vim.cmd("KinAttach diagnostics")
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    t.contains(chat.input_winbar(), "attached: diagnostics of notes.txt (1)")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "what is wrong" })
    chat.send_input()
    t.wait_for(function()
      return text():find("kin read your unsaved buffer", 1, true) and turn_over()
    end, "the model's answer about the problem", 60000)
    local started = traced("<-", "turn/started")[1].params
    t.eq("diagnostics", started.parts[1].type)
    t.contains(text(), "what is wrong\n\n> attached: diagnostics of notes.txt (1)")
    t.eq({}, require("kin.context").state.attached, "cleared once kin took the question")
  end)

  it(":KinAttach image sends a picture to a model that takes images; one that does not refuses it, and the question and the picture stay", function()
    vim.fn.writefile({ vim.json.encode({
      model = "mock-big",
      models = {
        { id = "mock-big", contextWindow = 400000 },
        { id = "mock-small", contextWindow = 8000, images = false },
      },
    }) }, env.home .. "/settings.json")
    local png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    local f = assert(io.open(env.ws .. "/pic.png", "wb"))
    f:write(vim.base64.decode(png))
    f:close()
    local chat = require("kin.chat")
    vim.cmd("KinAttach image pic.png")
    vim.cmd("KinChat")
    t.contains(chat.input_winbar(), "attached: image pic.png image/png")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "what is in the picture" })
    chat.send_input()
    t.wait_for(function()
      return text():find("what is in the picture", 1, true) and turn_over()
    end, "the turn with the picture", 60000)
    local input = traced("->", "turn/start")[1].params.input
    t.eq({ type = "image", mimeType = "image/png", data = png }, input[2])
    t.contains(text(), "what is in the picture\n\n> attached: image image/png (")
    -- A model without images: kin refuses the question, naming the part; nothing is lost.
    vim.cmd("KinModel mock-small")
    t.wait_for(function()
      return tr().model == "mock-small"
    end, "model mock-small")
    vim.cmd("KinAttach image pic.png")
    t.capture_notify()
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "and now?" })
    chat.send_input()
    t.wait_for(function()
      return t.notes_text():find("does not take images", 1, true)
    end, "kin's refusal", 60000)
    t.eq(2, #traced("->", "turn/start"), "not sent again without the picture")
    t.eq({ "and now?" }, vim.api.nvim_buf_get_lines(chat.state.input_buf, 0, -1, false))
    t.eq(1, #require("kin.context").state.attached, "the picture stays attached")
  end)
end)
