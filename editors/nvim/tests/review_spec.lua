-- Reviewing what kin proposes, with the real kin and the scripted mock model (tests/rules.json):
-- a long diff read to its end, pickers that must not hide it, edits of open buffers (applied to
-- the buffer, reloaded from disk, unsaved changes respected), and a question kin refuses.
local t = require("harness")

local kin = require("realkin")
kin.need_kin()

local env = {}

local function setup(extra)
  kin.setup(env, extra)
end

before_each(function()
  kin.fresh(env)
  setup()
end)

local turn_over, chat_text, sent = kin.turn_over, kin.text, kin.sent

local function wait_question(text)
  return t.wait_panel(text, 60000)
end

-- The lines of the body that are on the screen now, as the screen shows them.
local function visible_body()
  local win = t.panel().body
  local r = t.win_rect(win)
  local rows = {}
  for row = r.top + 1, r.bottom do -- the first row is the title bar
    rows[#rows + 1] = t.screen_row(row)
  end
  return table.concat(rows, "\n")
end

-- What the screen shows of kin's body where no float covers it.
local function uncovered_body()
  return t.uncovered_text(t.panel().body, 1)
end

-- Types keys where the cursor is, as a person would.
local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

-- Closes the picker that has the cursor with <Esc>, as a person would: telescope's prompt, in
-- Insert mode, takes one to go to Normal mode and one more to close.
local function close_picker()
  local body = t.panel().body
  if vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
    type_keys("<Esc>")
  end
  type_keys("<Esc>")
  t.wait_for(function()
    return #t.floats_over(body) == 0
  end, "the picker closed")
end

describe("reviewing", function()
  it("a 120-line tab-indented diff is read to its last line before answering", function()
    vim.cmd("KinChat please write long")
    wait_question("+++ b/long.go")
    local p = t.panel()
    local buf = p.body_buf
    local body = t.panel_body()
    t.contains(body, "+\t\tvalue_1 := compute(1)")
    t.contains(body, "+\tvalue_120 := compute(120)")
    t.eq(8, vim.bo[buf].tabstop, "drawn with the tabstop it is measured with")
    t.ok(vim.api.nvim_win_get_height(p.body) < 120, "the diff is longer than the window")
    local bar = vim.api.nvim_eval_statusline(vim.wo[p.body].winbar, { winid = p.body, use_winbar = true }).str
    t.contains(bar, "Write long.go")
    t.ok(bar:find("/%d+ lines") and bar:find("Top"), "the title bar says there is more: " .. bar)
    t.not_contains(visible_body(), "value_120", "the end is not in view yet")
    -- Page down from the choices, as a person would, to the last line.
    local pages = 0
    while vim.fn.line("w$", p.body) < vim.api.nvim_buf_line_count(buf) do
      t.press("<C-f>")
      pages = pages + 1
      t.ok(pages < 100, "paging reaches the end")
    end
    local shown = visible_body()
    t.contains(shown, "value_120 := compute(120)", "the last line is on the screen")
    t.contains(shown, "value_119 := compute(119)")
    t.eq(0, #sent("approval/respond"), "not answered while reading")
    -- Every line of the diff was on the screen at some point: no row lost to a tabstop.
    t.eq(vim.api.nvim_buf_line_count(buf), vim.fn.line("w$", p.body))
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq("allow_once", sent("approval/respond")[1].params.decision)
    local file = vim.fn.readfile(env.ws .. "/long.go")
    t.eq(120, #file)
    t.eq("\tvalue_120 := compute(120)", file[120])
  end)

  -- dressing.nvim's vim.ui.select, with its builtin backend and with its telescope one.
  for _, backend in ipairs({ "builtin", "telescope" }) do
    it("dressing.nvim's vim.ui.select (" .. backend .. " backend) never hides the diff and never answers it", function()
      local plugins = require("fixtures.plugins")
      plugins.use("dressing.nvim")
      if backend == "telescope" then
        plugins.use("plenary.nvim", "telescope.nvim")
      end
      require("dressing").setup({ select = { backend = { backend } } })
      local ft = backend == "builtin" and "DressingSelect" or "TelescopePrompt"
      local selects = 0
      local select = vim.ui.select
      vim.ui.select = function(...)
        selects = selects + 1
        return select(...)
      end
      vim.cmd("KinChat please write long")
      wait_question("+++ b/long.go")
      t.eq(0, selects, "no picker for an approval")
      local body = t.panel().body
      t.eq({}, t.floats_over(body), "nothing covers the diff")
      -- The person opens a picker (the session list) and uses it while kin asks.
      vim.cmd("KinSessions")
      t.wait_for(function()
        return vim.bo.filetype == ft
      end, "dressing's " .. backend .. " picker with the cursor")
      t.eq(1, selects)
      local picker_win = vim.api.nvim_get_current_win()
      t.ok(vim.api.nvim_win_get_config(picker_win).relative ~= "", "the picker is a float")
      t.contains(uncovered_body(), "compute(", "what the picker leaves of kin's window shows the diff")
      if backend == "builtin" then
        type_keys("j")
      else
        type_keys("1asd")
        t.wait_for(function()
          return vim.api.nvim_get_current_line():find("1asd", 1, true)
        end, "the keys in telescope's prompt")
      end
      t.eq(picker_win, vim.api.nvim_get_current_win(), "the picker kept the cursor")
      t.eq(0, #sent("approval/respond"), "the picker's keys answered nothing")
      close_picker()
      t.eq(0, #sent("approval/respond"), "closing the picker answered nothing")
      t.ok(t.panel(), "kin's window is still there, uncovered")
      t.eq({}, t.floats_over(body))
      t.contains(visible_body(), "+++ b/long.go")
      t.press("d")
      t.wait_for(turn_over, "the turn to end", 60000)
      t.eq("deny", sent("approval/respond")[1].params.decision)
    end)
  end
end)

describe("open buffers", function()
  local function open_notes(lines)
    vim.fn.writefile({ "alpha", "gamma" }, env.ws .. "/notes.txt")
    vim.cmd("edit " .. vim.fn.fnameescape(env.ws .. "/notes.txt"))
    local buf = vim.api.nvim_get_current_buf()
    if lines then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    end
    return buf
  end

  it("an edit goes into the buffer, unsaved changes kept, and one u takes it back", function()
    local buf = open_notes({ "alpha", "gamma", "mine, not saved" })
    local win = vim.api.nvim_get_current_win()
    require("kin").ask("please edit notes")
    wait_question("+beta")
    t.contains(t.panel_body(), "-alpha\n+beta\n gamma\n mine, not saved", "the diff is against what the buffer holds")
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq({ "beta", "gamma", "mine, not saved" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.ok(vim.bo[buf].modified, "not saved")
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"), "the disk is untouched")
    t.contains(chat_text(), "— completed")
    -- kin asked the plugin to apply it, and the plugin said it did.
    local asked, answered = {}, {}
    for _, l in ipairs(require("kin.service").ctx.client.trace) do
      local ok, m = pcall(vim.json.decode, l:sub(4))
      if ok and type(m) == "table" then
        if l:sub(1, 2) == "<-" and m.method == "workspace/applyEdit" then
          asked[m.id] = true
        elseif l:sub(1, 2) == "->" and m.id ~= nil and asked[m.id] and m.result then
          answered[#answered + 1] = m.result
        end
      end
    end
    t.eq({ { applied = true } }, answered)
    vim.api.nvim_set_current_win(win)
    vim.cmd("normal! u")
    t.eq({ "alpha", "gamma", "mine, not saved" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "one u undoes kin's edit only")
  end)

  -- The output of the last bash call, as kin sent it.
  local function command_output()
    local out
    for _, m in ipairs(kin.traced("<-", "turn/toolCall")) do
      if m.params.name == "bash" and m.params.output then
        out = m.params.output
      end
    end
    return out
  end

  it("an edit to an open buffer without unsaved changes is saved at once: the next command reads it", function()
    local buf = open_notes()
    require("kin").ask("please edit and cat")
    wait_question("+beta")
    t.press("a")
    wait_question("cat notes.txt")
    local card = t.panel_body()
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.not_contains(card, "unsaved", "nothing unsaved to warn about")
    t.eq({ "beta", "gamma" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.eq(false, vim.bo[buf].modified, "saved")
    t.eq({ "beta", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"))
    t.contains(command_output(), "beta\ngamma", "cat read kin's edit")
    t.contains(chat_text(), "The command ran.")
    local results = {}
    for _, m in ipairs(kin.traced("<-", "turn/toolCall")) do
      if m.params.name == "edit_file" and m.params.output then
        results[#results + 1] = m.params.output
      end
    end
    t.contains(results[#results], "in the editor, which saved it")
    -- :e! cannot drop it, and one u still takes it back.
    vim.cmd("edit!")
    t.eq({ "beta", "gamma" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  end)

  it("an edit to a buffer with unsaved changes stays unsaved, and the command's approval says what it will not see", function()
    local buf = open_notes({ "alpha", "gamma", "mine, not saved" })
    require("kin").ask("please edit and cat")
    wait_question("+beta")
    t.press("a")
    wait_question("cat notes.txt")
    local card = t.panel_body()
    t.contains(card, "The command sees the saved files, not the unsaved changes in: notes.txt.")
    local req = kin.traced("<-", "approval/request")
    t.eq({ "notes.txt" }, req[#req].params.unsavedFiles)
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq({ "beta", "gamma", "mine, not saved" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.ok(vim.bo[buf].modified, "not saved: the person's change is theirs to save")
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"))
    t.contains(command_output(), "alpha\ngamma", "cat read the disk, as the approval said")
  end)

  -- The approval/request frames kin sent for a request, in order.
  local function cards(id)
    return vim.tbl_filter(function(m)
      return m.params.requestId == id
    end, kin.traced("<-", "approval/request"))
  end

  it("typing into the file while kin asks replaces the card with the new diff, in place; Allow writes that one", function()
    local buf = open_notes()
    require("kin").ask("please edit notes")
    wait_question("+beta")
    local id = require("kin.prompts").current().id
    -- The person goes on typing in the file.
    vim.api.nvim_buf_set_lines(buf, 2, 2, false, { "typed while kin asked" })
    wait_question("kin updated this request")
    t.contains(t.panel_body(), "-alpha\n+beta\n gamma\n typed while kin asked")
    t.eq(1, #require("kin.prompts").items(), "replaced, not queued beside the old one")
    t.eq(id, require("kin.prompts").current().id)
    t.eq(1, cards(id)[2].params.revision)
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq({ "beta", "gamma", "typed while kin asked" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    local answers = sent("approval/respond")
    t.eq({ requestId = id, decision = "allow_once", revision = 1 }, answers[#answers].params)
    t.contains(chat_text(), "— completed")
  end)

  it("when the text the edit was for is gone, the card says so and Allow writes nothing", function()
    local buf = open_notes()
    require("kin").ask("please edit notes")
    wait_question("+beta")
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "omega" })
    wait_question("this change no longer applies")
    t.contains(t.panel_body(), "old_string not found in notes.txt")
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq({ "omega", "gamma" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "nothing written")
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"))
    t.contains(chat_text(), "— failed")
    t.eq(0, #kin.traced("<-", "workspace/applyEdit"))
  end)

  it("a replaced card keeps where the person had scrolled to", function()
    vim.fn.writefile({ "package long" }, env.ws .. "/long.go")
    vim.cmd("edit " .. vim.fn.fnameescape(env.ws .. "/long.go"))
    local buf = vim.api.nvim_get_current_buf()
    require("kin").ask("please write long")
    wait_question("compute(120)")
    local body = t.panel().body
    vim.api.nvim_win_call(body, function()
      vim.fn.winrestview({ topline = 40, lnum = 40 })
    end)
    local top = vim.fn.getwininfo(body)[1].topline
    t.eq(40, top)
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "// typed while kin asked" })
    wait_question("kin updated this request")
    t.contains(t.panel_body(), "-// typed while kin asked")
    t.eq(top, vim.fn.getwininfo(t.panel().body)[1].topline, "the same rows are on the screen")
    t.press("d")
    t.wait_for(turn_over, "the turn to end", 60000)
  end)

  it("with apply_edit off: an open buffer is reloaded after kin writes, an unsaved one is never written", function()
    setup({ documents = { apply_edit = false } })
    local buf = open_notes()
    require("kin").ask("please edit notes")
    wait_question("+beta")
    t.press("a")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq({ "beta", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"), "written on disk")
    t.wait_for(function()
      return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "beta"
    end, "the buffer reloaded")
    t.eq(false, vim.bo[buf].modified)

    -- Now with unsaved changes: kin refuses before asking, nothing is written.
    vim.fn.writefile({ "alpha", "gamma" }, env.ws .. "/notes.txt")
    vim.cmd("checktime")
    vim.cmd("edit!")
    vim.api.nvim_buf_set_lines(buf, 2, 2, false, { "mine, not saved" })
    require("kin").ask("please edit notes")
    t.wait_for(function()
      return chat_text():find("unsaved changes in the editor", 1, true) and turn_over()
    end, "kin to refuse", 60000)
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"), "the file is not written")
    t.eq({ "alpha", "gamma", "mine, not saved" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "the buffer is untouched")
    t.eq(1, #sent("approval/respond"), "nothing more was asked")
  end)

  it("kin reads the buffer, not the file: didOpen and didChange follow it", function()
    local buf = open_notes()
    require("kin.service").wait_ready(30000)
    t.wait_for(function()
      return #sent("textDocument/didOpen") >= 1
    end, "didOpen")
    vim.api.nvim_buf_set_text(buf, 0, 0, 0, 0, { "😀é " })
    local ch = sent("textDocument/didChange")
    t.eq(1, #ch)
    t.eq({ start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }, ch[1].params.contentChanges[1].range)
    -- "é" is bytes 4-5 of the line (after the 4 bytes of "😀"), UTF-16 unit 2 (after the two of "😀").
    vim.api.nvim_buf_set_text(buf, 0, 4, 0, 6, { "x" })
    ch = sent("textDocument/didChange")
    t.eq({ start = { line = 0, character = 2 }, ["end"] = { line = 0, character = 3 } }, ch[2].params.contentChanges[1].range)
    t.eq("x", ch[2].params.contentChanges[1].text)
    t.eq(vim.api.nvim_buf_get_changedtick(buf), ch[2].params.textDocument.version)
    vim.cmd("bwipeout!")
    t.eq(1, #sent("textDocument/didClose"))
  end)
end)

describe("a question kin does not take", function()
  it("stays in the input when no model is configured, and no empty session is left", function()
    setup({ env = { OPENAI_API_KEY = "", OPENAI_BASE_URL = "" } })
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    local input = chat.state.input_buf
    vim.api.nvim_buf_set_lines(input, 0, -1, false, { "is this", "kept?" })
    chat.send_input()
    t.wait_for(function()
      return require("kin.service").ctx.ready
    end, "kin to start")
    local listed
    require("kin.service").request("session/list", {}, function(r)
      listed = r
    end)
    t.wait_for(function()
      return listed
    end, "session/list")
    t.eq({ "is this", "kept?" }, vim.api.nvim_buf_get_lines(input, 0, -1, false), "the question is kept")
    t.eq({}, listed.sessions, "no empty session")
    t.eq(0, #sent("turn/start"))
  end)

  it("sent while a turn runs, joins that turn (turn/steer) and leaves the input once kin took it", function()
    vim.cmd("KinChat please write long")
    wait_question("+++ b/long.go") -- the turn waits for the approval
    local chat = require("kin.chat")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "and another thing" })
    chat.send_input()
    t.wait_for(function()
      return #sent("turn/steer") == 1
    end, "turn/steer")
    t.wait_for(function()
      local c = require("kin.service").ctx.client
      return c and next(c.pending) == nil
    end, "kin's answer")
    t.eq(1, #sent("turn/start"), "no second turn")
    t.eq({ "" }, vim.api.nvim_buf_get_lines(chat.state.input_buf, 0, -1, false), "kin took it")
    t.press("d")
    t.wait_for(turn_over, "the first turn to end", 60000)
  end)
end)
