-- The conversation's features (models, reasoning, usage, compaction, instructions) against the
-- in-process fake kin, shaped as PROTOCOL.md gives them. With the real kin: features_spec.lua.
local t = require("harness")
local fake_kin = require("fake_kin")

local MODELS = {
  models = {
    { id = "gpt-5.1", name = "GPT-5.1", contextWindow = 400000, efforts = { "low", "medium", "high" }, api = "responses", images = true, configured = true },
    { id = "qwen2.5-coder", name = "qwen2.5-coder", contextWindow = 32768, efforts = {}, api = "chat", images = false, configured = false, missing = "set LOCAL_KEY" },
  },
  default = "gpt-5.1",
}

local function setup(handlers)
  local fake = fake_kin.new({ handlers = vim.tbl_extend("force", {
    ["models/list"] = function()
      return MODELS
    end,
    ["session/configure"] = function(p)
      return { sessionId = p.sessionId, model = p.model, effort = p.effort }
    end,
  }, handlers or {}) })
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  return fake
end

-- asked is a fake kin asked question, and the session of its turn/start.
local function asked(question)
  local fake = setup()
  require("kin").ask(question)
  t.wait_for(function()
    return #fake:sent("turn/start") == 1
  end, "turn/start")
  return fake, fake:sent("turn/start")[1].params.sessionId
end

local function tr()
  return require("kin.chat").current()
end

describe("the conversation", function()
  it(":KinModel picks a model and an effort from models/list", function()
    local fake = setup()
    require("kin").ask("hello")
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "a session")
    -- Between turns (kin changes the model only then).
    local sid = fake:sent("turn/start")[1].params.sessionId
    fake:notify("turn/completed", { sessionId = sid, turnId = "t_1", status = "completed" })
    t.wait_for(function()
      return not tr().running
    end, "the turn's end")
    t.script_select({ "gpt-5.1", "high" })
    vim.cmd("KinModel")
    t.wait_for(function()
      return #fake:sent("session/configure") == 1
    end, "session/configure")
    t.contains(t.selects[1].labels[1], "gpt-5.1 — GPT-5.1  (400k context, effort low/medium/high, images)")
    t.contains(t.selects[1].labels[2], "not configured: set LOCAL_KEY")
    t.eq({ "(none: the service decides)", "low", "medium", "high" }, t.selects[2].labels)
    local p = fake:sent("session/configure")[1].params
    t.eq({ "gpt-5.1", "high" }, { p.model, p.effort })
    t.wait_for(function()
      return tr().model == "gpt-5.1"
    end, "the model shown")
    t.contains(require("kin.status").text(tr()), "gpt-5.1 (high)")
    -- Typed: a model without efforts.
    vim.cmd("KinModel qwen2.5-coder")
    t.wait_for(function()
      return #fake:sent("session/configure") == 2
    end, "second configure")
    t.eq(nil, fake:sent("session/configure")[2].params.effort)
  end)

  it("before the first question, the model goes with session/new", function()
    local fake = setup()
    vim.cmd("KinModel gpt-5.1 low")
    require("kin").ask("hi")
    t.wait_for(function()
      return #fake:sent("session/new") == 1
    end, "session/new")
    local p = fake:sent("session/new")[1].params
    t.eq({ "gpt-5.1", "low" }, { p.model, p.effort })
  end)

  it("reasoning streams into a folded, dimmed block apart from the answer", function()
    local fake, sid = asked("why?")
    local function n(m, p)
      return { jsonrpc = "2.0", method = m, params = vim.tbl_extend("force", { sessionId = sid, turnId = "t_1" }, p) }
    end
    fake:send_many({
      n("turn/started", { input = "why?" }),
      n("turn/reasoning", { text = "**Checking Save**\n\nIt writes " }),
      n("turn/reasoning", { text = "to a temp file first." }),
      n("turn/delta", { text = "Yes, it is atomic." }),
      n("turn/usage", { inputTokens = 3840, outputTokens = 137, contextTokens = 2051, contextWindow = 400000 }),
      n("turn/completed", { status = "completed", usage = { inputTokens = 3840, outputTokens = 137, contextTokens = 2051, contextWindow = 400000 } }),
    })
    t.wait_for(function()
      return tr().last == "end"
    end, "the turn to end")
    local text = tr():text_content()
    t.contains(text, "_reasoning_ (3 lines)\n  ┊ **Checking Save**\n  ┊ \n  ┊ It writes to a temp file first.\n\nYes, it is atomic.")
    local marks = vim.api.nvim_buf_get_extmarks(tr().buf, require("kin.transcript").dim_ns, 0, -1, { details = true })
    t.eq(4, #marks, "the reasoning is dimmed")
    local win = require("kin.chat").state.win
    local row
    for i, l in ipairs(vim.api.nvim_buf_get_lines(tr().buf, 0, -1, false)) do
      if l == "  ┊ **Checking Save**" then
        row = i
      end
    end
    t.ok(vim.fn.win_execute(win, "echo foldclosed(" .. row .. ")"):match("%d+") == tostring(row), "folded")
    t.contains(require("kin.status").text(tr()), "ctx ")
    t.contains(require("kin.status").text(tr()), "2.1k/400k 1%")
  end)

  it("a long reasoning stream is drawn piece by piece, not rewritten whole at each piece (no freeze)", function()
    -- Attack: a model streams a long reasoning, a token at a time. Each piece rewrote the whole
    -- block (and its highlights): n pieces cost n² and 16,000 of them froze Neovim for over
    -- half a minute. The rewritten lines are counted: they grow with the stream, not its square.
    local fake, sid = asked("think long")
    local rewritten = 0
    vim.api.nvim_buf_attach(tr().buf, false, {
      on_lines = function(_, _, _, first, _, new_last)
        rewritten = rewritten + (new_last - first)
      end,
    })
    local pieces, msgs = 4000, {}
    for i = 1, pieces do
      msgs[#msgs + 1] = { jsonrpc = "2.0", method = "turn/reasoning", params = { sessionId = sid, turnId = "t_1", text = i % 8 == 0 and ("w" .. i .. "\n") or ("w" .. i .. " ") } }
    end
    fake:send_many(msgs)
    fake:notify("turn/completed", { sessionId = sid, turnId = "t_1", status = "completed" })
    t.wait_for(function()
      return tr().last == "end"
    end, "the turn to end", 480000)
    local lines = vim.api.nvim_buf_get_lines(tr().buf, 0, -1, false)
    local at = vim.fn.index(lines, "_reasoning_ (500 lines)") + 1
    t.ok(at > 0, "the reasoning's heading counts its lines")
    t.eq("  ┊ w1 w2 w3 w4 w5 w6 w7 w8", lines[at + 1])
    t.eq("  ┊ w3993 w3994 w3995 w3996 w3997 w3998 w3999 w4000", lines[at + 500])
    local marks = vim.api.nvim_buf_get_extmarks(tr().buf, require("kin.transcript").dim_ns, 0, -1, {})
    t.eq(501, #marks, "each line of the reasoning is dimmed once")
    t.ok(rewritten < 10 * pieces, ("%d lines rewritten for %d pieces"):format(rewritten, pieces))
  end)

  it("an answer streamed as one long line is not rewritten whole at each piece (no freeze)", function()
    -- Attack (or minified JSON, a base64 blob): a model streams one line in 80,000 pieces. Each
    -- piece read the transcript's last line and wrote it back with the piece added, so the
    -- stream cost the line's length 80,000 times: 26 to 48 s of a frozen Neovim. The pieces come
    -- as kin writes them, a pipe read (about 400 notifications) at a time.
    local fake, sid = asked("one long line")
    -- The bytes Neovim replaced and wrote: each piece once, not the line again at each piece.
    local moved = 0
    vim.api.nvim_buf_attach(tr().buf, false, {
      on_bytes = function(_, _, _, _, _, _, _, _, old_bytes, _, _, new_bytes)
        moved = moved + old_bytes + new_bytes
      end,
    })
    local pieces, batch = 80000, {}
    local t0, wall0 = t.cpu_seconds(), vim.uv.hrtime()
    for i = 1, pieces do
      batch[#batch + 1] = { jsonrpc = "2.0", method = "turn/delta", params = { sessionId = sid, turnId = "t_1", text = "w" .. i .. " " } }
      if #batch == 400 or i == pieces then
        fake:send_many(batch)
        batch = {}
      end
    end
    fake:notify("turn/completed", { sessionId = sid, turnId = "t_1", status = "completed" })
    t.wait_for(function()
      return tr().last == "end"
    end, "the turn to end", 480000)
    local secs, wall = t.cpu_seconds() - t0, (vim.uv.hrtime() - wall0) / 1e9
    local lines = vim.api.nvim_buf_get_lines(tr().buf, 0, -1, false)
    local answer
    for _, l in ipairs(lines) do
      if l:sub(1, 6) == "w1 w2 " then
        answer = l
      end
    end
    t.ok(answer ~= nil, "the answer is one line")
    t.eq(548894, #answer, "every piece, once")
    t.eq("w79999 w80000 ", answer:sub(-14))
    t.ok(moved < 2 * #answer, ("%d bytes replaced or written for a line of %d"):format(moved, #answer))
    -- Neovim's own CPU time, which a loaded machine does not stretch as it does the clock
    -- (tree-sitter reparses the line at each redraw); on main it did not end within 120 s.
    t.ok(secs < 60, ("80,000 pieces took %.1f s of CPU (%.1f s on the clock)"):format(secs, wall))
  end)

  it("text held back on a long line is written before the next turn, and the turn is marked where it starts", function()
    local T = require("kin.transcript")
    local tr = T.new("s_held")
    tr:user("a")
    tr:text(string.rep("x", T.LONG_LINE + 10))
    tr:text("y\nz\nq") -- held back: the line is long
    tr:user("b")
    local lines = vim.api.nvim_buf_get_lines(tr.buf, 0, -1, false)
    t.eq({ "z", "q", "", "## You", "", "b" }, vim.list_slice(lines, 8, 13))
    local rows = vim.tbl_map(function(m)
      return m[2]
    end, vim.api.nvim_buf_get_extmarks(tr.buf, T.turn_ns, 0, -1, {}))
    t.eq({ 0, 10 }, rows, "each turn's mark is on its ## You")
  end)

  it("a long session's folded outputs do not slow each streamed piece of an answer", function()
    -- Every folded row of the transcript (each call's output) was listed again at each change
    -- of the buffer, for 'foldexpr': a piece of an answer cost the whole session's output, so
    -- after 400 calls of 1,000 lines 1,000 pieces took 15 s (and each call drawn more).
    local T = require("kin.transcript")
    local tr = T.new("s_long")
    vim.cmd("botright split")
    local win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, tr.buf)
    T.fold_window(win)
    local out = {}
    for i = 1, 1000 do
      out[i] = "output line " .. i
    end
    out = table.concat(out, "\n")
    tr:user("go on")
    for c = 1, 400 do
      tr:tool({ callId = "call_" .. c, name = "bash", kind = "execute", title = "Run c" .. c, status = "completed", output = out })
    end
    local t0, wall0 = t.cpu_seconds(), vim.uv.hrtime()
    for i = 1, 1000 do
      tr:text("w" .. i .. " ")
    end
    local secs, wall = t.cpu_seconds() - t0, (vim.uv.hrtime() - wall0) / 1e9
    t.ok(secs < 2, ("1000 pieces took %.1f s of CPU (%.1f s on the clock)"):format(secs, wall))
    -- The outputs are still folded, each apart; the answer is not.
    local lines = vim.api.nvim_buf_get_lines(tr.buf, 0, -1, false)
    local row = vim.fn.index(lines, "[tool] bash: Run c400 — completed") + 2
    t.eq("  │ output line 1", lines[row])
    t.eq(tostring(row), vim.fn.win_execute(win, "echo foldclosed(" .. row .. ")"):match("%d+"), "folded")
    t.eq(tostring(row + 999), vim.fn.win_execute(win, "echo foldclosedend(" .. row .. ")"):match("%d+"), "to the output's end")
    t.eq("-1", vim.fn.win_execute(win, "echo foldclosed(" .. #lines .. ")"):match("%-?%d+"), "the answer is not folded")
  end)

  it("a call an MCP server runs as a task shows working and where it stands", function()
    local fake, sid = asked("run the job")
    local function n(m, p)
      return { jsonrpc = "2.0", method = m, params = vim.tbl_extend("force", { sessionId = sid, turnId = "t_1" }, p) }
    end
    local call = { callId = "j1", name = "mcp__jobs__job", kind = "other", title = "Call job on jobs", arguments = "{}" }
    fake:send_many({
      n("turn/started", { input = "run the job" }),
      n("turn/toolCall", vim.tbl_extend("force", call, { status = "running" })),
      n("turn/toolCall", vim.tbl_extend("force", call, { status = "working", statusMessage = "task working: indexing 2/2" })),
    })
    t.wait_for(function()
      return tr():text_content():find("indexing 2/2", 1, true) ~= nil
    end, "the working line")
    t.contains(tr():text_content(), "[tool] mcp__jobs__job: Call job on jobs — working: task working: indexing 2/2")
    t.contains(require("kin.status").text(tr()), "running mcp__jobs__job")
    fake:send_many({
      n("turn/toolCall", vim.tbl_extend("force", call, { status = "completed", output = "indexed 2 files" })),
      n("turn/completed", { status = "completed" }),
    })
    t.wait_for(function()
      return tr().last == "end"
    end, "the turn to end")
    t.contains(tr():text_content(), "[tool] mcp__jobs__job: Call job on jobs — completed")
    t.ok(not tr():text_content():find("— completed: task", 1, true), "the message goes with working only")
  end)

  it("redraws reasoning, compaction, instructions and model changes from history", function()
    local tr2 = require("kin.transcript").new("s_h")
    tr2:history({
      { type = "user", turnId = "t_1", text = "q", parts = { { type = "file", path = "a.go", bytes = 10 } } },
      { type = "reasoning", turnId = "t_1", text = "thinking hard" },
      { type = "assistant", turnId = "t_1", text = "a" },
      { type = "compaction", text = "## What was asked\nq", reason = "auto" },
      { type = "instructions", files = { { path = "/w/AGENTS.md", bytes = 12 } }, changed = { "AGENTS.md" } },
      { type = "configure", model = "qwen2.5-coder" },
    })
    local text = tr2:text_content()
    t.contains(text, "> attached: file a.go (10 bytes)")
    t.contains(text, "_reasoning_ (1 line)\n  ┊ thinking hard")
    t.contains(text, "[compacted: auto]")
    t.contains(text, "  │ ## What was asked")
    t.contains(text, "[instructions] /w/AGENTS.md (12 bytes); changed: AGENTS.md")
    t.contains(text, "[model] qwen2.5-coder")
  end)

  it(":KinCompact asks kin to compact the session", function()
    t.capture_notify()
    local fake = setup({ ["session/compact"] = function()
      return { compacted = true }
    end })
    require("kin").ask("hi")
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "a session")
    vim.cmd("KinCompact")
    t.wait_for(function()
      return t.notes_text():find("compacted", 1, true)
    end, "the answer")
    t.eq(fake:sent("turn/start")[1].params.sessionId, fake:sent("session/compact")[1].params.sessionId)
  end)
end)
