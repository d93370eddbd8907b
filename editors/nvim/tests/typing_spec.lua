-- A person typing in another buffer while kin asks: a second Neovim (tests/embedded.lua) with the
-- plugin and the real kin, its keys handled by its own main loop as it receives them.
local t = require("harness")
local embedded = require("embedded")

local KIN = vim.env.KIN_BIN
if not KIN or vim.fn.executable(KIN) ~= 1 then
  t.skip("KIN_BIN is not set: tests/run.sh builds kin and the mock model")
end

local e
after_each(embedded.stop_all)

local function start()
  local ws = vim.fn.tempname() .. "-ws"
  vim.fn.mkdir(ws, "p")
  e = embedded.with_kin(ws)
  return ws
end

describe("typing while kin asks", function()
  it("never turns keys typed in another buffer into an answer", function()
    local ws = start()
    -- A narrow screen and Neovim's own vim.notify: a message that does not fit would raise a
    -- prompt that takes the keys.
    e:lua([[vim.notify = _G.builtin_notify; vim.o.columns = 40]])
    -- The person asks, goes back to their code and types there (Insert mode).
    e:lua([[
      local ws = ...
      vim.cmd("edit " .. vim.fn.fnameescape(ws .. "/code.txt"))
      _G.code_win = vim.api.nvim_get_current_win()
      require("kin.chat").ask("please run it")
      vim.cmd("startinsert")
    ]], ws)
    t.eq("i", e:mode())
    -- Type the keys that once answered approvals (a digit and Enter, and every choice key)
    -- before, while and after the approval arrives.
    local typed = 0
    local function type_line()
      e:input("1asdpt<CR>")
      typed = typed + 1
    end
    local arrived = false
    embedded.poll(function()
      type_line()
      arrived = e:lua([[return require("kin.panel").is_open()]])
      return arrived
    end, "the approval to arrive while typing", 60000)
    for _ = 1, 5 do
      type_line()
    end
    -- Every key reached the buffer, nothing was answered, the cursor never left.
    local got = e:wait(([[
      local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
      local n = 0
      for _, l in ipairs(lines) do
        if l == "1asdpt" then n = n + 1 end
      end
      return n == %d and lines
    ]]):format(typed), "all typed lines in the buffer")
    t.eq(typed + 1, #got, "the typed lines and the one under the cursor")
    t.eq("i", e:mode(), "still in Insert mode")
    local state = e:lua([[
      local sent = 0
      for _, l in ipairs(require("kin.service").ctx.client.trace) do
        local ok, m = pcall(vim.json.decode, l:sub(4))
        if ok and type(m) == "table" and m.method == "approval/respond" then sent = sent + 1 end
      end
      return {
        sent = sent,
        same_win = vim.api.nvim_get_current_win() == _G.code_win,
        open = #require("kin.prompts").items(),
        body = table.concat(vim.api.nvim_buf_get_lines(require("kin.panel").windows().body_buf, 0, -1, false), "\n"),
      }
    ]])
    t.eq(0, state.sent, "no approval/respond was sent:\n" .. e:trace())
    t.ok(state.same_win, "the cursor stayed in the code")
    t.eq(1, state.open, "the approval is still open")
    t.contains(state.body, "echo kin-$((40+2))")
    -- Only an explicit key in kin's window answers.
    e:input("<Esc>:KinAnswer<CR>")
    e:wait([[return require("kin.panel").has_focus()]], "the cursor in kin's window")
    e:input("d")
    e:wait([[
      local tr = require("kin.chat").current()
      return tr.last == "end" and not tr.running
    ]], "the turn to end")
    local after = e:lua([[
      local r = {}
      for _, l in ipairs(require("kin.service").ctx.client.trace) do
        local ok, m = pcall(vim.json.decode, l:sub(4))
        if ok and type(m) == "table" and m.method == "approval/respond" then r[#r + 1] = m.params.decision end
      end
      return { decisions = r, back = vim.api.nvim_get_current_win() == _G.code_win,
        text = require("kin.chat").current():text_content() }
    ]])
    t.eq({ "deny" }, after.decisions)
    t.ok(after.back, "the cursor went back to the code once nothing was left to decide")
    t.contains(after.text, "— denied")
  end)
end)

-- The same with a real picker open (tests/fixtures/vendor): telescope's prompt or dressing.nvim's
-- vim.ui.input has the cursor, in Insert mode, when the approval of a 120-line diff arrives.
describe("a picker open while kin asks", function()
  -- In the embedded Neovim: what kin's window shows on the screen where the picker leaves it
  -- uncovered, what the cursor is in, the approval/respond decisions sent, and what is typed.
  local STATE = [[
    local t = require("harness")
    local decisions = {}
    for _, l in ipairs(require("kin.service").ctx.client.trace) do
      local ok, m = pcall(vim.json.decode, l:sub(4))
      if ok and type(m) == "table" and m.method == "approval/respond" then decisions[#decisions + 1] = m.params.decision end
    end
    local p = t.panel()
    local floats = p and #t.floats_over(p.body) or 0
    return {
      decisions = decisions,
      open = #require("kin.prompts").items(),
      shown = p and t.uncovered_text(p.body, 1) or "",
      covered = floats > 0,
      win = vim.api.nvim_get_current_win(),
      filetype = vim.bo.filetype,
      mode = vim.api.nvim_get_mode().mode,
      line = vim.api.nvim_get_current_line(),
    }
  ]]

  -- Types into whatever has the cursor until kin's window shows the approval, then a few times
  -- more; returns what was typed.
  local function type_through_the_approval(keys)
    local typed = ""
    embedded.poll(function()
      e:input(keys)
      typed = typed .. keys
      return e:lua([[return require("kin.panel").is_open()]])
    end, "the approval to arrive while typing", 60000)
    for _ = 1, 3 do
      e:input(keys)
      typed = typed .. keys
    end
    return typed
  end

  local function answer_deny()
    e:input("<Esc>:KinAnswer<CR>")
    e:wait([[return require("kin.panel").has_focus()]], "the cursor in kin's window")
    e:input("d")
    e:wait([[
      local tr = require("kin.chat").current()
      return tr.last == "end" and not tr.running
    ]], "the turn to end")
    t.eq({ "deny" }, e:lua(STATE).decisions)
  end

  it("telescope's prompt keeps the cursor and the keys; the diff is on the screen; only d in kin's window answers", function()
    start()
    e:lua([[
      require("fixtures.plugins").use("plenary.nvim", "telescope.nvim")
      local pickers, finders = require("telescope.pickers"), require("telescope.finders")
      local actions, action_state = require("telescope.actions"), require("telescope.actions.state")
      _G.picked = nil
      pickers.new({}, {
        prompt_title = "files",
        finder = finders.new_table({ results = { "main.go", "1asdpt.go", "notes.txt" } }),
        sorter = require("telescope.config").values.generic_sorter({}),
        attach_mappings = function(prompt_bufnr)
          actions.select_default:replace(function()
            _G.picked = action_state.get_selected_entry()[1]
            actions.close(prompt_bufnr)
          end)
          return true
        end,
      }):find()
      _G.prompt_win = vim.api.nvim_get_current_win()
      require("kin.chat").ask("please write long")
    ]])
    e:wait([[return vim.bo.filetype == "TelescopePrompt" and vim.api.nvim_get_mode().mode == "i"]], "telescope's prompt in Insert mode")
    local prompt_win = e:lua([[return _G.prompt_win]])
    -- How much is typed before the approval arrives depends on the machine's load. More than the
    -- one-row prompt is wide then scrolls it sideways, the cursor's end in view, instead of
    -- wrapping it (which shows only what is past the last full row, behind "<<<").
    e:lua([[vim.wo[_G.prompt_win].wrap = false]])
    -- The keys that once answered approvals: a digit and every choice key.
    local typed = type_through_the_approval("1asdpt")
    local s = e:wait(([[
      local s = (function() %s end)()
      return s.line:find(%q, 1, true) and s
    ]]):format(STATE, typed), "every key in telescope's prompt")
    t.eq(prompt_win, s.win, "telescope's prompt kept the cursor")
    t.eq("TelescopePrompt", s.filetype)
    t.eq("i", s.mode, "still in Insert mode")
    t.eq({}, s.decisions, "no approval/respond was sent:\n" .. e:trace())
    t.eq(1, s.open, "the approval is still open")
    -- Telescope covers the middle 80%; the columns it leaves show the start of the diff.
    t.contains(s.shown, "+++ b/", "the diff is on the screen beside telescope")
    -- Nothing of kin's is drawn over telescope: its prompt row shows what was typed.
    local prompt_rows = e:lua([[
      local t = require("harness")
      vim.cmd("redraw") -- the screen as it is now, every key typed
      local r, rows = t.win_rect(_G.prompt_win), {}
      for row = r.top, r.bottom do
        rows[#rows + 1] = t.screen_row(row)
      end
      return table.concat(rows, "\n")
    ]])
    t.contains(prompt_rows, typed:sub(-20), "telescope's prompt is on the screen")
    -- The person picks a file (backspacing what they typed first); <CR> goes to telescope.
    e:input(("<BS>"):rep(#typed) .. "1asdpt")
    e:wait([[
      local picker = require("telescope.actions.state").get_current_picker(vim.api.nvim_get_current_buf())
      local entry = require("telescope.actions.state").get_selected_entry()
      return picker ~= nil and picker:_get_prompt() == "1asdpt" and picker.manager:num_results() == 1
        and entry ~= nil and entry[1] == "1asdpt.go"
    ]], "telescope to narrow the files to 1asdpt.go")
    e:input("<CR>")
    e:wait([[return _G.picked ~= nil]], "telescope to pick")
    t.eq("1asdpt.go", e:lua([[return _G.picked]]))
    s = e:wait(([[
      local s = (function() %s end)()
      return not s.covered and s
    ]]):format(STATE), "telescope closed")
    t.eq({}, s.decisions, "picking answered nothing")
    t.contains(s.shown, "+++ b/long.go", "kin's window, uncovered, shows the diff")
    answer_deny()
  end)

  it("dressing.nvim's vim.ui.input keeps the cursor and the keys, <CR> included; only d in kin's window answers", function()
    start()
    e:lua([[
      require("fixtures.plugins").use("dressing.nvim")
      require("dressing").setup({})
      _G.entered = nil
      vim.ui.input({ prompt = "Rename to: " }, function(text)
        _G.entered = text or false
      end)
      _G.input_win = vim.api.nvim_get_current_win()
      require("kin.chat").ask("please write long")
    ]])
    e:wait([[return vim.bo.filetype == "DressingInput" and vim.api.nvim_get_mode().mode == "i"]], "dressing's input in Insert mode")
    local input_win = e:lua([[return _G.input_win]])
    local typed = type_through_the_approval("1asdpt")
    local s = e:wait(([[
      local s = (function() %s end)()
      return s.line == %q and s
    ]]):format(STATE, typed), "every key in dressing's input")
    t.eq(input_win, s.win, "dressing's input kept the cursor")
    t.eq("i", s.mode, "still in Insert mode")
    t.eq({}, s.decisions, "no approval/respond was sent:\n" .. e:trace())
    t.eq(1, s.open, "the approval is still open")
    t.contains(s.shown, "compute(", "the diff is on the screen around dressing's input")
    -- <CR> confirms the input, as it would without kin.
    e:input("<CR>")
    e:wait([[return _G.entered ~= nil]], "dressing's input to be confirmed")
    t.eq(typed, e:lua([[return _G.entered]]))
    s = e:wait(([[
      local s = (function() %s end)()
      return not s.covered and s
    ]]):format(STATE), "dressing's input closed")
    t.eq({}, s.decisions, "<CR> answered nothing")
    t.contains(s.shown, "+++ b/long.go", "kin's window, uncovered, shows the diff")
    answer_deny()
  end)
end)
