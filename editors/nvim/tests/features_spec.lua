-- What kin's service offers beyond questions and answers, used from Neovim against the real kin
-- and the scripted mock model (tests/rules.json): modes, the plan, undo, /commands with
-- completion, kin's own questions, the call limit; and what the chat does with answers: code
-- blocks highlighted, yanked and put, file locations opened, retry and edit, the progress bar.
local t = require("harness")

local kin = require("realkin")
kin.need_kin()

local env = {}

local function setup(extra)
  kin.setup(env, extra)
end

before_each(function()
  kin.fresh(env)
  vim.fn.writefile({ "alpha", "gamma" }, env.ws .. "/notes.txt")
  setup()
end)

local tr, turn_over, text, sent, ask_and_wait, winbar = kin.current, kin.turn_over, kin.text, kin.sent, kin.ask_and_wait, kin.winbar

describe("kin's features", function()
  it("the plan is a checklist that updates in place", function()
    ask_and_wait("please plan")
    local body = text()
    t.contains(body, "**Plan**\n- [x] read the failing test\n- [~] fix the race (high)")
    local _, plans = body:gsub("%*%*Plan%*%*", "")
    t.eq(1, plans, "one checklist, updated in place:\n" .. body)
    t.contains(body, "Planned and done.")
  end)

  it("a 3-step plan updated a second time shows its 3 steps once", function()
    vim.cmd("KinChat")
    ask_and_wait("please plan three")
    local body = text()
    t.contains(body, "Three steps, planned twice.")
    t.contains(body, "**Plan**\n- [x] reproduce the bug\n- [~] fix the layout\n- [ ] add a test\n")
    local _, plans = body:gsub("%*%*Plan%*%*", "")
    t.eq(1, plans, "one checklist:\n" .. body)
    local _, items = body:gsub("\n%- %[.%] ", "")
    t.eq(3, items, "three items, not the first plan's beside the second's:\n" .. body)
  end)

  it(":KinMode sets the session's mode; auto-edit edits unasked, :KinUndo puts the file back", function()
    vim.cmd("KinMode auto-edit") -- before any session: the next session starts in it
    t.contains(winbar(), "auto-edit")
    ask_and_wait("please edit notes")
    t.eq("auto-edit", sent("session/new")[1].params.mode)
    t.eq(nil, require("kin.panel").is_open() or nil, "auto-edit asked nothing")
    t.eq({ "beta", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"))
    vim.cmd("KinUndo")
    t.wait_for(function()
      return text():find("[undo] turn", 1, true)
    end, "the undo", 60000)
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"), "put back")
    t.contains(text(), "  │ restored " .. env.ws .. "/notes.txt")
    -- Back to agent: the same edit is asked again.
    vim.cmd("KinMode agent")
    t.wait_for(function()
      return tr().mode == "agent"
    end, "mode agent")
    t.eq("agent", sent("session/configure")[1].params.mode)
    t.contains(text(), "[mode] agent")
    require("kin").ask("please edit notes")
    t.wait_panel("+beta", 60000)
    t.press("d")
    t.wait_for(turn_over, "the turn to end", 60000)
  end)

  it("/commands are completed from commands/list and run by kin", function()
    ask_and_wait("please plan") -- kin lists the commands of a session
    vim.cmd("KinChat")
    local buf = require("kin.chat").state.input_buf
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "/un" })
    vim.api.nvim_win_set_cursor(0, { 1, 3 })
    local complete = require("kin.complete")
    t.eq(0, complete.omnifunc(1, ""))
    local words = vim.tbl_map(function(i)
      return i.word
    end, complete.omnifunc(0, "/un"))
    t.eq({ "/undo " }, words)
    local all = complete.omnifunc(0, "/")
    t.ok(#all >= 4, "kin's commands: " .. vim.inspect(all))
    t.eq(1, #sent("commands/list"))
    -- A question that is not a command is not completed as one.
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "what is /tmp" })
    vim.api.nvim_win_set_cursor(0, { 1, 12 })
    t.eq(-3, complete.omnifunc(1, ""))
    -- /plan runs in kin, without a turn, and says what it did.
    require("kin").ask("/plan")
    t.wait_for(function()
      return text():find("[/plan]", 1, true)
    end, "the command's answer", 60000)
    t.eq(false, tr().running)
  end)

  it("kin's own question (the ask tool) is answered in kin's window", function()
    t.script_select({ "postgres" })
    require("kin").ask("please ask me")
    t.wait_panel("kin asks: ", 60000)
    t.contains(t.panel_body(), "Which database should the tests use?")
    -- The model may ask for anything: the form says its answer goes to the model.
    t.contains(t.panel_body(), "What you answer goes to the model")
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.contains(text(), "Thanks for the answer.")
    local r = sent("elicitation/respond")[1].params
    t.eq("accept", r.action)
    local values = vim.tbl_values(r.content)
    t.eq({ "postgres" }, values)
  end)

  it("the call limit asks whether to go on; Stop the turn ends it", function()
    vim.fn.writefile({ vim.json.encode({ maxToolCallsPerTurn = 1 }) }, env.home .. "/settings.json")
    require("kin").ask("please loop")
    t.wait_panel("Continue for", 60000)
    local choices = t.panel_choices()
    t.ok(choices[#choices]:match("^  d  "), "Stop the turn is d, last: " .. vim.inspect(choices))
    t.press("d")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.contains(text(), "stopped at the tool call limit")
  end)

  it("shows progress while a turn waits", function()
    require("kin").ask("please run it")
    t.wait_panel("echo kin-", 60000)
    t.contains(winbar(), "waiting for your answer (:KinAnswer)")
    local chatwin = require("kin.chat").state.win
    t.contains(vim.wo[chatwin].winbar, "kin.status")
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.not_contains(winbar(), "waiting")
  end)
end)

describe("context", function()
  it(":KinSend sends the selection beside the question, and kin takes it", function()
    vim.cmd("edit " .. vim.fn.fnameescape(env.ws .. "/notes.txt"))
    vim.cmd("2KinSend hello, what is this line?")
    t.wait_for(function()
      return text():find("what is this line?", 1, true) and turn_over()
    end, "the turn to end", 60000)
    t.contains(text(), "Hello from the mock.")
    local starts = sent("turn/start")
    local last = starts[#starts].params.input
    t.eq("table", type(last), "input parts")
    t.eq("selection", last[2].type)
    t.eq("gamma", last[2].text)
    t.contains(text(), "what is this line?\n\n> attached: selection notes.txt line 2")
  end)
end)

describe("answers in the chat", function()
  it("highlights code blocks, yanks one and puts it where you work", function()
    vim.cmd("edit " .. vim.fn.fnameescape(env.ws .. "/work.lua"))
    local work = vim.api.nvim_get_current_buf()
    ask_and_wait("please show code")
    local chat = require("kin.chat").state
    vim.api.nvim_set_current_win(chat.win)
    local lines = vim.api.nvim_buf_get_lines(tr().buf, 0, -1, false)
    local row
    for i, l in ipairs(lines) do
      if l == "local answer = 42" then
        row = i
      end
    end
    t.ok(row, "the code is in the transcript")
    t.ok(vim.treesitter.highlighter.active[tr().buf], "highlighted with treesitter")
    vim.treesitter.get_parser(tr().buf):parse(true)
    local caps = vim.tbl_map(function(c)
      return c.capture
    end, vim.treesitter.get_captures_at_pos(tr().buf, row - 1, 0))
    t.ok(vim.tbl_contains(caps, "keyword") or vim.tbl_contains(caps, "keyword.lua"), "lua is highlighted as lua: " .. vim.inspect(caps))
    vim.api.nvim_win_set_cursor(chat.win, { row, 0 })
    vim.api.nvim_feedkeys("gy", "x", false)
    t.eq("local answer = 42\nreturn answer\n", vim.fn.getreg('"'))
    vim.api.nvim_win_set_cursor(chat.win, { row + 1, 0 })
    vim.api.nvim_feedkeys("gp", "x", false)
    t.eq(work, vim.api.nvim_get_current_buf(), "in the window you work in")
    t.eq({ "", "local answer = 42", "return answer" }, vim.api.nvim_buf_get_lines(work, 0, -1, false))
  end)

  it("opens a file location kin mentions", function()
    ask_and_wait("please show code")
    local chat = require("kin.chat").state
    vim.api.nvim_set_current_win(chat.win)
    local lines = vim.api.nvim_buf_get_lines(tr().buf, 0, -1, false)
    for i, l in ipairs(lines) do
      local c = l:find("notes.txt:2", 1, true)
      if c then
        vim.api.nvim_win_set_cursor(chat.win, { i, c + 2 })
      end
    end
    vim.api.nvim_feedkeys("gf", "x", false)
    t.eq(env.ws .. "/notes.txt", vim.api.nvim_buf_get_name(0))
    t.eq(2, vim.api.nvim_win_get_cursor(0)[1])
    t.ok(vim.api.nvim_get_current_win() ~= chat.win, "opened beside the chat")
  end)

  it("retries the last question, and puts it back in the input to edit", function()
    ask_and_wait("hello there")
    local chat = require("kin.chat").state
    vim.api.nvim_set_current_win(chat.win)
    vim.api.nvim_feedkeys("R", "x", false)
    t.wait_for(function()
      local _, n = text():gsub("## You\n\nhello there", "")
      return n == 2 and turn_over()
    end, "the second turn", 60000)
    t.eq(2, #sent("turn/start"))
    vim.api.nvim_set_current_win(chat.win)
    vim.api.nvim_feedkeys("I", "x", false)
    t.eq(chat.input_win, vim.api.nvim_get_current_win())
    t.eq({ "hello there" }, vim.api.nvim_buf_get_lines(chat.input_buf, 0, -1, false))
  end)
end)
