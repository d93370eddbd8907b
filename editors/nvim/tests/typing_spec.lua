-- A person typing in another buffer while kin asks: a second Neovim (tests/embedded.lua) with the
-- plugin and the real kin, its keys handled by its own main loop as it receives them.
local t = require("harness")
local embedded = require("embedded")

local KIN = vim.env.KIN_BIN
if not KIN or vim.fn.executable(KIN) ~= 1 then
  t.skip("KIN_BIN is not set: tests/run.sh builds kin and the mock model")
end

local e
after_each(function()
  if e then
    e:stop()
    e = nil
  end
end)

local function start()
  local home = vim.fn.tempname() .. "-kin-home"
  local ws = vim.fn.tempname() .. "-ws"
  vim.fn.mkdir(home, "p")
  vim.fn.mkdir(ws, "p")
  e = embedded.start({
    cwd = ws,
    setup = { cmd = { KIN, "serve" }, env = { KIN_HOME = home }, log_file = home .. "/kin.log" },
  })
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
    end, "the approval to arrive while typing", 30000)
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
