local t = require("harness")
local fake_kin = require("fake_kin")

local function setup(handlers)
  local fake = fake_kin.new({ handlers = handlers })
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  return fake
end

local function chat_text()
  return require("kin.chat").current():text_content()
end

local function n(method, params)
  return { jsonrpc = "2.0", method = method, params = params }
end

-- Asks a question and waits for its turn/start; returns the session it went to.
local function ask_first(fake, question)
  require("kin").ask(question)
  t.wait_for(function()
    return #fake:sent("turn/start") == 1
  end, "turn/start")
  return fake:sent("turn/start")[1].params.sessionId
end

describe("chat", function()
  it("sends the input buffer with <CR> and streams the answer into a read-only markdown buffer", function()
    local fake
    fake = setup({
      ["turn/start"] = function(p, f)
        vim.schedule(function()
          f:send_many({
            n("turn/started", { sessionId = p.sessionId, turnId = "t_1", input = p.input }),
            n("turn/delta", { sessionId = p.sessionId, turnId = "t_1", text = "All tests " }),
          })
          f:notify("turn/delta", { sessionId = p.sessionId, turnId = "t_1", text = "pass.\nSecond line" })
          f:notify("turn/completed", { sessionId = p.sessionId, turnId = "t_1", status = "completed" })
        end)
        return { turnId = "t_1" }
      end,
    })
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    local input = chat.state.input_buf
    t.eq(input, vim.api.nvim_get_current_buf(), "the input buffer has the focus")
    vim.api.nvim_buf_set_lines(input, 0, -1, false, { "run the", "tests" })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    t.wait_for(function()
      return chat_text():find("Second line", 1, true)
    end, "the streamed answer")
    t.eq({ "" }, vim.api.nvim_buf_get_lines(input, 0, -1, false), "input cleared")
    t.eq("run the\ntests", fake:sent("turn/start")[1].params.input)
    t.eq(1, #fake:sent("session/new"))
    local text = chat_text()
    t.contains(text, "## You\n\nrun the\ntests\n\n## kin\n\nAll tests pass.\nSecond line")
    local buf = chat.current().buf
    t.eq("markdown", vim.bo[buf].filetype)
    t.eq(false, vim.bo[buf].modifiable)
    t.eq(fake:sent("session/new")[1] and chat.state.current, chat.current().session_id)
  end)

  -- A line break inside one line of text (a plan step the model wrote, an error with the body
  -- the provider answered, a server's notice, a file name with a newline in a repository) made
  -- nvim_buf_set_text refuse the edit: the turn's end was lost (the chat kept "running"), and a
  -- resumed session's history stopped being drawn at that item.
  it("text with line breaks inside one line is drawn, and what follows it too", function()
    local fake = setup()
    local sid = ask_first(fake, "plan it")
    fake:send_many({
      n("turn/started", { sessionId = sid, turnId = "t_1", input = "plan it" }),
      n("turn/plan", { sessionId = sid, turnId = "t_1", entries = { { content = "Fix the bug\nthen test", status = "in_progress" } } }),
      n("turn/toolCall", { sessionId = sid, turnId = "t_1", callId = "c1", name = "mcp", kind = "other", title = "read\nnotes", status = "completed", output = "ok" }),
      n("notice", { sessionId = sid, source = "compaction", level = "info", message = "summarised\nthe start" }),
      n("turn/completed", { sessionId = sid, turnId = "t_1", status = "failed", error = "model: 400 Bad Request\n{\"error\": \"bad\"}" }),
    })
    t.wait_for(function()
      return chat_text():find("400 Bad Request", 1, true)
    end, "the turn's end")
    local text = chat_text()
    t.contains(text, "Fix the bug")
    t.contains(text, "then test")
    t.contains(text, "read notes")
    t.contains(text, '{"error": "bad"}')
    t.eq(false, require("kin.chat").current().running, "the turn ended")

    -- The same in a resumed history: every item after the one with a line break is drawn.
    local tr = require("kin.transcript").new("s_nl")
    tr:history({
      { type = "user", text = "q", parts = { { type = "file", path = "dir\nname/a.go" } } },
      { type = "plan", turnId = "t_1", entries = { { content = "one\ntwo", status = "pending" } } },
      { type = "instructions", files = { { path = "sub\ndir/AGENTS.md", bytes = 3 } } },
      { type = "turn", status = "failed", error = "first\nsecond" },
      { type = "user", text = "after" },
      { type = "assistant", text = "the last answer" },
    })
    local all = tr:text_content()
    t.contains(all, "second")
    t.contains(all, "the last answer")
  end)

  it("a long transcript's highlighting parses what the window shows, not the whole session", function()
    -- Neovim 0.10's tree-sitter parsed the whole transcript after each change and ran the
    -- markdown injections over all of it: at 18,000 lines each streamed piece cost a redraw of
    -- 60-110 ms (the session stuttered). The parser now sees the lines shown and a margin.
    if not require("kin.tsregion").enabled then
      t.skip_case("Neovim 0.11 and later parse the whole transcript, in the background")
    end
    local fake = setup()
    ask_first(fake, "go")
    local chat = require("kin.chat")
    local tr, win = chat.current(), chat.state.win
    t.ok(vim.treesitter.highlighter.active[tr.buf] ~= nil, "the transcript is highlighted")
    for i = 1, 800 do
      tr:user("question " .. i .. " about `foo`")
      tr:text("Here is **some** answer.\n\n```lua\nlocal x = " .. i .. "\nprint(x)\n```\n\nMore *emph* here.\n- one\n- two\n")
      tr:tool({ callId = "c" .. i, name = "bash", kind = "execute", title = "Run ls", status = "completed", output = "a\nb\nc" })
      tr:turn_end({ status = "completed" })
    end
    tr:user("last")
    local n = vim.api.nvim_buf_line_count(tr.buf)
    t.ok(n > 15000, n .. " lines")
    local parser = vim.treesitter.get_parser(tr.buf)
    local function spanned()
      local rows = 0
      for _, tree in pairs(parser:trees()) do
        local sr, _, er = tree:root():range()
        rows = rows + er - sr
      end
      return rows
    end
    -- Scrolls the chat window to the line, redraws, and says whether its Lua is highlighted.
    local function highlighted(line)
      local row = vim.fn.index(vim.api.nvim_buf_get_lines(tr.buf, 0, -1, false), line) + 1
      t.ok(row > 0, line)
      vim.fn.win_execute(win, "normal! " .. row .. "Gzz")
      vim.cmd("redraw!")
      for _, c in ipairs(vim.treesitter.get_captures_at_pos(tr.buf, row - 1, 0)) do
        if c.lang == "lua" and c.capture:match("^keyword") then
          return true
        end
      end
      return false
    end
    vim.cmd("redraw!")
    local t0, wall0 = t.cpu_seconds(), vim.uv.hrtime()
    for i = 1, 30 do
      tr:text("w" .. i .. " ")
      vim.cmd("redraw")
    end
    local secs, wall = t.cpu_seconds() - t0, (vim.uv.hrtime() - wall0) / 1e9
    t.ok(spanned() < 1000, ("the parser spans %d of %d lines"):format(spanned(), n))
    t.ok(secs < 3, ("30 pieces with a redraw each took %.2f s of CPU (%.2f s on the clock)"):format(secs, wall))
    t.contains(tr:text_content(), "## kin\n\nw1 w2 w3")
    -- The code shown is highlighted, at the end and where the person scrolls to.
    t.ok(highlighted("local x = 800"), "the last code block is highlighted")
    t.ok(highlighted("local x = 1"), "the first code block is highlighted once shown")
    t.ok(spanned() < 1000, ("at the top, the parser spans %d of %d lines"):format(spanned(), n))
    t.ok(highlighted("local x = 400"), "a code block in the middle is highlighted once shown")
    t.ok(spanned() < 1000, ("in the middle, the parser spans %d of %d lines"):format(spanned(), n))
  end)

  it("writes tool calls as lines whose status updates in place", function()
    local fake = setup()
    local sid = ask_first(fake, "run the tests")
    local call = { sessionId = sid, turnId = "t_1", callId = "c1", name = "bash", kind = "execute", title = "Run go test ./..." }
    local function with(status)
      return vim.tbl_extend("force", call, { status = status })
    end
    fake:send_many({
      n("turn/started", { sessionId = sid, turnId = "t_1", input = "run the tests" }),
      n("turn/delta", { sessionId = sid, turnId = "t_1", text = "Running." }),
      n("turn/toolCall", with("pending")),
      n("turn/toolCall", with("awaiting_approval")),
    })
    t.wait_for(function()
      return chat_text():find("awaiting approval", 1, true)
    end, "awaiting approval")
    fake:notify("turn/toolCall", with("running"))
    t.wait_for(function()
      return chat_text():find("— running", 1, true)
    end, "running")
    t.contains(chat_text(), "Running.\n\n[tool] bash: Run go test ./... — running")
    fake:notify("turn/delta", { sessionId = sid, turnId = "t_1", text = "Done" })
    fake:notify("turn/toolCall", with("completed"))
    fake:notify("turn/completed", { sessionId = sid, turnId = "t_1", status = "failed", error = "boom" })
    t.wait_for(function()
      return chat_text():find("**Error:** boom", 1, true)
    end, "the error")
    local text = chat_text()
    t.contains(text, "[tool] bash: Run go test ./... — completed\n\nDone")
    local _, count = text:gsub("%[tool%]", "")
    t.eq(1, count, "one line per call")
  end)

  it("streams a call's output under it, folded, and ends it with the exit status", function()
    local fake = setup()
    local sid = ask_first(fake, "run the tests")
    local call = { sessionId = sid, turnId = "t_1", callId = "c1", name = "bash", kind = "execute", title = "Run go test ./..." }
    local function with(extra)
      return { jsonrpc = "2.0", method = "turn/toolCall", params = vim.tbl_extend("force", call, extra) }
    end
    fake:send_many({
      n("turn/started", { sessionId = sid, turnId = "t_1", input = "run the tests" }),
      with({ status = "running", outputDelta = "ok  \tapp\t0.01s\n" }),
      with({ status = "running", outputDelta = "FAIL\tlib\n" }),
    })
    t.wait_for(function()
      return chat_text():find("FAIL", 1, true)
    end, "the streamed output")
    t.contains(chat_text(), "[tool] bash: Run go test ./... — running\n  │ ok  \tapp\t0.01s\n  │ FAIL\tlib")
    fake:send_many({
      with({ status = "failed", output = "ok  \tapp\t0.01s\nFAIL\tlib\nexit status 1\n" }),
      n("turn/delta", { sessionId = sid, turnId = "t_1", text = "One package fails." }),
    })
    t.wait_for(function()
      return chat_text():find("One package fails.", 1, true)
    end, "the answer")
    t.contains(chat_text(), "[tool] bash: Run go test ./... — failed (exit status 1)\n  │ ok  \tapp\t0.01s\n  │ FAIL\tlib\n  │ exit status 1\n\nOne package fails.")
    local win = require("kin.chat").state.win
    local lines = vim.api.nvim_buf_get_lines(require("kin.chat").current().buf, 0, -1, false)
    local first
    for i, l in ipairs(lines) do
      if l:find("^  │ ok") then
        first = i
      end
    end
    t.eq(first, tonumber(vim.fn.win_execute(win, "echo foldclosed(" .. (first + 2) .. ")"):match("%d+")), "one closed fold over the output")
    t.eq(-1, tonumber(vim.fn.win_execute(win, "echo foldclosed(" .. (first - 1) .. ")"):match("%-?%d+")), "the call's line is not folded")
  end)

  it("a narrow input window keeps the start of its title", function()
    setup()
    vim.o.columns = 70
    vim.cmd("KinChat")
    local win = require("kin.chat").state.input_win
    local width = vim.api.nvim_win_get_width(win)
    t.ok(width < 40, "narrow: " .. width)
    local r = t.win_rect(win)
    vim.cmd("redraw")
    local cells = {}
    for col = r.left, r.right do
      cells[#cells + 1] = vim.fn.screenstring(r.top, col)
    end
    local bar = table.concat(cells)
    t.eq(" your question  (@file", bar:sub(1, #" your question  (@file"), "cut at the end, not the start: " .. bar)
  end)

  it("cancels the running turn with :KinCancel and the buffer mapping", function()
    local fake = setup()
    ask_first(fake, "hello")
    vim.cmd("KinCancel")
    t.wait_for(function()
      return #fake:sent("turn/cancel") == 1
    end, "turn/cancel from the command")
    local chat = require("kin.chat")
    vim.api.nvim_set_current_win(chat.state.win)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-c>", true, false, true), "x", false)
    t.wait_for(function()
      return #fake:sent("turn/cancel") == 2
    end, "turn/cancel from <C-c>")
    t.eq(fake:sent("turn/start")[1].params.sessionId, fake:sent("turn/cancel")[2].params.sessionId)
  end)

  it(":KinSend attaches the selection as a part beside the question", function()
    local fake = setup()
    local file = vim.fn.tempname() .. ".lua"
    vim.fn.writefile({ "local a = 1", "local b = 'é'", "return a + b" }, file)
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    vim.cmd("2,3KinSend what does this return?")
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    local input = fake:sent("turn/start")[1].params.input
    t.eq({ type = "text", text = "what does this return?" }, input[1])
    t.eq("selection", input[2].type)
    t.eq(vim.fs.normalize(file), vim.fs.normalize(input[2].path:match("^/") and input[2].path or (vim.uv.cwd() .. "/" .. input[2].path)))
    t.eq({ start = { line = 1, character = 0 }, ["end"] = { line = 2, character = 12 } }, input[2].range)
    t.eq("local b = 'é'\nreturn a + b", input[2].text)
  end)

  it(":KinSend to a kin that takes no parts sends the file as a fenced block instead", function()
    local fake = setup({
      ["turn/start"] = function(p)
        if type(p.input) == "table" then
          return nil, { code = -32602, message = "invalid params: input: json: cannot unmarshal array into a string" }
        end
        return { turnId = "t_1" }
      end,
    })
    t.script_input({ "explain" })
    local file = vim.fn.tempname() .. ".txt"
    vim.fn.writefile({ "x", "```", "y" }, file)
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    vim.cmd("KinSend")
    t.wait_for(function()
      return #fake:sent("turn/start") == 2
    end, "the second turn/start")
    local input = fake:sent("turn/start")[2].params.input
    t.eq("string", type(input))
    t.contains(input, "````\nx\n```\ny\n````\n\nexplain")
    t.contains(input, vim.fn.fnamemodify(file, ":t"))
  end)

  it("a question asked while :KinNew waits goes to the new session; if kin dies first, it stays in the input and nothing stays blocked", function()
    local deferred = {}
    local fake
    fake = setup({
      ["session/new"] = function(p, f, msg)
        if #f:sent("session/new") == 1 then
          table.insert(deferred, msg) -- kin never answers this one: it dies first
          return fake_kin.DEFER
        end
        return { session = { sessionId = "s_" .. #f:sent("session/new"), title = p.title or "" } }
      end,
    })
    vim.cmd("KinNew")
    t.wait_for(function()
      return #deferred == 1
    end, "session/new")
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "where does this go?" })
    chat.send_input()
    t.eq(0, #fake:sent("turn/start"), "it waits for the new session")
    fake:_exit(1, 0)
    t.wait_for(function()
      return chat.state.switching == nil
    end, "the switch released")
    t.eq({ "where does this go?" }, vim.api.nvim_buf_get_lines(chat.state.input_buf, 0, -1, false))
    -- The next question is not blocked: kin starts again and takes it.
    chat.send_input()
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    t.eq("s_2", fake:sent("turn/start")[1].params.sessionId)
  end)

  -- After :KinRestart the chat re-attaches its session (session/resume) while :KinNew asks for
  -- another (session/new); kin may answer the two in either order. The question asked right
  -- after :KinNew goes to the new session, once, and the new session stays current.
  for _, first in ipairs({ "session/resume", "session/new" }) do
    it("a question asked after :KinRestart and :KinNew goes once to the new session when kin answers " .. first .. " first", function()
      local held = {}
      local restarted = false
      local fake
      local function hold(method)
        return function(p, f, msg)
          if restarted and method ~= first and not held[method] then
            held[method] = msg -- answered once the other one was
            return fake_kin.DEFER
          end
          if method == "session/new" then
            return { session = { sessionId = "s_" .. #f:sent("session/new"), title = p.title or "" } }
          end
          return { session = { sessionId = p.sessionId, title = "", turns = 1 }, history = {}, pending = {} }
        end
      end
      fake = setup({ ["session/new"] = hold("session/new"), ["session/resume"] = hold("session/resume") })
      local chat = require("kin.chat")
      require("kin").ask("one")
      t.wait_for(function()
        return #fake:sent("turn/start") == 1
      end, "turn/start")
      t.eq("s_1", chat.state.current)
      restarted = true
      vim.cmd("KinRestart")
      vim.cmd("KinNew")
      require("kin").ask("two")
      local other = first == "session/new" and "session/resume" or "session/new"
      -- What the plugin shows once it took an answer: the session re-attached, or current.
      local function taken(method)
        if method == "session/resume" then
          return not chat.state.stale["s_1"]
        end
        return chat.state.current == "s_2"
      end
      local function to_new_session_only()
        local starts = fake:sent("turn/start")
        for i = 2, #starts do
          t.eq("s_2", starts[i].params.sessionId, "the question went to the new session")
        end
        t.ok(#starts <= 2, "the question went once")
        return #starts
      end
      t.wait_for(function()
        return held[other] and taken(first)
      end, first .. " answered, " .. other .. " held")
      to_new_session_only()
      local result = other == "session/new" and { session = { sessionId = "s_2", title = "" } }
        or { session = { sessionId = "s_1", title = "", turns = 1 }, history = {}, pending = {} }
      fake:send({ jsonrpc = "2.0", id = held[other].id, result = result })
      t.wait_for(function()
        return taken(other) and #fake:sent("turn/start") >= 2
      end, other .. " answered and the question sent")
      to_new_session_only()
      fake:notify("turn/started", { sessionId = "s_2", turnId = "t_1", input = "two" })
      fake:notify("turn/completed", { sessionId = "s_2", turnId = "t_1", status = "completed" })
      t.wait_for(function()
        return chat.current().last == "end"
      end, "the turn to end")
      to_new_session_only()
      t.eq("s_2", chat.state.current)
      t.contains(chat_text(), "two")
    end)
  end

  it("the session the person picked last stays current when kin answers an earlier pick later", function()
    local held
    local fake = setup({
      ["session/resume"] = function(_, _, msg)
        held = msg
        return fake_kin.DEFER
      end,
      ["session/new"] = function()
        return { session = { sessionId = "s_new", title = "" } }
      end,
    })
    local chat = require("kin.chat")
    chat.resume("s_old") -- :KinSessions picked an old session ...
    t.wait_for(function()
      return held
    end, "session/resume")
    vim.cmd("KinNew") -- ... then the person asked for a new one
    require("kin").ask("where to?")
    t.wait_for(function()
      return chat.state.current == "s_new"
    end, "the new session")
    fake:send({ jsonrpc = "2.0", id = held.id, result = { session = { sessionId = "s_old", title = "old" }, mode = "ask", history = {}, pending = {} } })
    t.wait_for(function()
      local old = chat.state.transcripts["s_old"]
      return old and old.mode == "ask" and #fake:sent("turn/start") >= 1 and chat.state.switching == nil
    end, "the old session's answer taken, and turn/start")
    t.eq(1, #fake:sent("turn/start"), "the question went once")
    t.eq("s_new", chat.state.current)
    t.eq("s_new", fake:sent("turn/start")[1].params.sessionId)
    t.eq(chat.current().buf, vim.api.nvim_win_get_buf(chat.state.win), "the chat shows the new session")
  end)

  it(":KinSessions resumes a session and redraws its history", function()
    local fake = setup({
      ["session/list"] = function()
        return { sessions = { { sessionId = "s_a", title = "fix the flaky test", turns = 1, updatedAt = "2026" } } }
      end,
      ["session/resume"] = function(p)
        return {
          session = { sessionId = p.sessionId, title = "fix the flaky test", turns = 1 },
          history = {
            { type = "user", turnId = "t_1", text = "run the tests" },
            { type = "toolCall", turnId = "t_1", callId = "call_1", name = "bash", title = "Run go test ./...", status = "completed" },
            { type = "decision", turnId = "t_1", callId = "call_1", kind = "tool_call", decision = "allow_once", reason = "person", title = "Run go test ./..." },
            { type = "assistant", turnId = "t_1", text = "All tests pass." },
            { type = "turn", turnId = "t_1", status = "completed" },
          },
          pending = {},
        }
      end,
    })
    t.script_select({ "fix the flaky test", "Resume" })
    vim.cmd("KinSessions")
    t.wait_for(function()
      return chat_text():find("All tests pass.", 1, true)
    end, "history drawn")
    t.eq("s_a", require("kin.chat").state.current)
    local text = chat_text()
    t.contains(text, "## You\n\nrun the tests\n\n## kin\n\n[tool] bash: Run go test ./... — completed\n[approval] Run go test ./... — allow once\n\nAll tests pass.")
    t.contains(t.selects[1].labels[1], "fix the flaky test  (1 turn, ")
    -- The next question continues that session.
    require("kin").ask("and now?")
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    t.eq("s_a", fake:sent("turn/start")[1].params.sessionId)
    t.eq(0, #fake:sent("session/new"))
  end)

  it(":KinSessions shows this project's sessions with readable times, and every project on request", function()
    local here = vim.fs.normalize(vim.uv.cwd())
    local fake = setup({
      ["session/list"] = function()
        return { sessions = {
          { sessionId = "s_1", title = "mine", turns = 3, updatedAt = "2026-11-30T23:15:00.123456789Z", cwd = here },
          { sessionId = "s_2", title = "elsewhere", turns = 1, updatedAt = "2026-11-30T23:15:00Z", cwd = "/some/other/project" },
          { sessionId = "s_3", title = "old, of no known folder", turns = 1, updatedAt = "2026-11-29T08:00:00+01:00" },
        } }
      end,
    })
    t.script_select({ "Sessions of every project", false })
    vim.cmd("KinSessions")
    t.wait_for(function()
      return #t.selects == 2
    end, "both pickers")
    local fmt = require("kin").format_time -- pinned by the case below
    local when = fmt("2026-11-30T23:15:00Z")
    t.ok(not when:find("%.123") and not when:find("T23"), "no raw timestamp: " .. when)
    t.eq({ "mine  (3 turns, " .. when .. ")", "old, of no known folder  (1 turn, " .. fmt("2026-11-29T07:00:00Z") .. ")", "Sessions of every project (1 more)" }, t.selects[1].labels)
    t.contains(t.selects[1].prompt, "sessions in ")
    t.contains(table.concat(t.selects[2].labels, "\n"), "elsewhere  (1 turn, " .. when .. ")  /some/other/project")
    t.eq(2, #fake:sent("session/list"), "every project's list is asked again")
    for i, m in ipairs(fake:sent("session/list")) do
      -- One-shot and piped `kin chat` sessions (an `origin`) are not the person's conversations.
      t.eq(true, m.params.interactive, "session/list " .. i .. " asks for interactive sessions only")
    end
  end)

  it(":KinSessions loads more sessions on demand, a page at a time", function()
    local here = vim.fs.normalize(vim.uv.cwd())
    local fake = setup({
      ["session/list"] = function(p)
        if p.cursor == nil then
          return { sessions = { { sessionId = "s_new", title = "newest", turns = 1, cwd = here } }, nextCursor = "c1" }
        end
        return { sessions = { { sessionId = "s_old", title = "older", turns = 2, cwd = here } } }
      end,
    })
    t.script_select({ "Load more sessions", false })
    vim.cmd("KinSessions")
    t.wait_for(function()
      return #t.selects == 2
    end, "both pickers")
    t.eq({ "newest", "Load more sessions" }, vim.tbl_map(function(l)
      return (l:gsub("  %(.*", ""))
    end, t.selects[1].labels))
    t.eq({ "newest", "older" }, vim.tbl_map(function(l)
      return (l:gsub("  %(.*", ""))
    end, t.selects[2].labels))
    local sent = fake:sent("session/list")
    t.eq(50, sent[1].params.limit)
    t.eq("c1", sent[2].params.cursor, "the next page asked with the answer's cursor")
    t.eq({ true, true }, { sent[1].params.interactive, sent[2].params.interactive }, "every page with the same params")
  end)

  it("reads session times as a person does", function()
    local kin = require("kin")
    local t0 = 1796080500
    t.eq("today " .. os.date("%H:%M", t0), kin.format_time("2026-11-30T23:15:00.999999999Z", t0 + 60))
    t.eq("yesterday " .. os.date("%H:%M", t0), kin.format_time("2026-11-30T23:15:00Z", t0 + 86400))
    t.eq(os.date("%Y-%m-%d %H:%M", t0), kin.format_time("2026-12-01T01:15:00+02:00", t0 + 10 * 86400))
    t.eq("not a time", kin.format_time("not a time"))
  end)

  it(":KinSessions deletes a session", function()
    local fake = setup({
      ["session/list"] = function()
        return { sessions = { { sessionId = "s_b", title = "old", turns = 2 } } }
      end,
    })
    t.script_select({ "old", "Delete" })
    vim.cmd("KinSessions")
    t.wait_for(function()
      return #fake:sent("session/delete") == 1
    end, "session/delete")
    t.eq("s_b", fake:sent("session/delete")[1].params.sessionId)
  end)

  it(":KinNew starts a new session", function()
    local fake = setup()
    vim.cmd("KinNew my title")
    t.wait_for(function()
      return require("kin.chat").state.current
    end, "a current session")
    t.eq("my title", fake:sent("session/new")[1].params.title)
  end)

  it("re-attaches the session after :KinRestart", function()
    local fake = setup()
    ask_first(fake, "one")
    vim.cmd("KinRestart")
    t.wait_for(function()
      return fake.spawned == 2 and require("kin.service").ctx.ready
    end, "restarted")
    require("kin").ask("two")
    t.wait_for(function()
      return #fake:sent("turn/start") == 2
    end, "second turn/start")
    local sid = fake:sent("turn/start")[1].params.sessionId
    t.eq(sid, fake:sent("session/resume")[1].params.sessionId)
    t.eq(sid, fake:sent("turn/start")[2].params.sessionId)
  end)
end)
