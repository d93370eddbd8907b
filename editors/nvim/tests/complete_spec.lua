-- Typing `@file`, `#buffer` and `/command` in the chat's input, key by key, in a second Neovim
-- (tests/embedded.lua) whose own input loop handles each key as a person's, with Neovim's
-- default 'completeopt' ("menu,preview", which inserts the first candidate by itself).
local t = require("harness")
local embedded = require("embedded")

if not vim.env.KIN_BIN or vim.fn.executable(vim.env.KIN_BIN) ~= 1 then
  t.skip("KIN_BIN is not set: tests/run.sh builds kin and the mock model")
end

local e, ws
before_each(function()
  ws = vim.fn.tempname() .. "-ws"
  vim.fn.mkdir(ws .. "/cmd", "p")
  vim.fn.writefile({ "# readme" }, ws .. "/README.md")
  vim.fn.writefile({ "package main" }, ws .. "/main.go")
  vim.fn.writefile({ "package main" }, ws .. "/cmd/main_test.go")
  e = embedded.with_kin(ws)
  e:lua([[vim.cmd("KinChat")]])
end)

after_each(embedded.stop_all)

-- Types text one key at a time, each handled by the embedded Neovim's own loop before the next
-- (an RPC request is answered only once the keys before it are handled).
local function type_keys(keys)
  for _, k in ipairs(keys) do
    e:input(k)
    e:lua("return true")
  end
end

local function chars(s)
  local out = {}
  for c in s:gmatch(".") do
    out[#out + 1] = c
  end
  return out
end

local STATE = [[
  local info = vim.fn.complete_info({ "pum_visible", "items", "selected" })
  local words = {}
  for _, it in ipairs(info.items or {}) do
    words[#words + 1] = it.word
  end
  return {
    line = vim.api.nvim_get_current_line(),
    mode = vim.api.nvim_get_mode().mode,
    menu = info.pum_visible == 1,
    words = words,
    completeopt = vim.o.completeopt,
    running = require("kin.service").is_running(),
  }
]]

describe("completion in the chat's input, typed key by key", function()
  it("@file keeps what is typed until a candidate is picked", function()
    t.eq("menu,preview", e:lua("return vim.o.completeopt"), "Neovim's default")
    type_keys({ "i" })
    type_keys(chars("@"))
    local s = e:lua(STATE)
    t.ok(s.menu, "the menu opened at @: " .. vim.inspect(s))
    t.eq("@", s.line, "nothing inserted by itself")
    type_keys(chars("main"))
    s = e:lua(STATE)
    t.eq("@main", s.line, "what was typed, not @README.mdmain")
    t.ok(s.menu and vim.tbl_contains(s.words, "@main.go"), "the matches are offered: " .. vim.inspect(s.words))
    -- Picking one inserts it: the first shown is the first that matches what was typed.
    type_keys({ "<C-n>", "<C-y>" })
    t.eq("@main.go", e:lua(STATE).line)
    -- `#` with no buffer to offer: nothing happens (it once reopened its empty completion for
    -- ever, and Neovim hung).
    type_keys(chars(" #x"))
    t.eq("@main.go #x", e:lua(STATE).line)
    type_keys({ "<BS>", "<BS>", "<BS>" })
    -- #buffer, like @file.
    e:lua([[vim.cmd("badd " .. vim.fn.fnameescape(...)); vim.fn.bufload(vim.fn.bufnr(...))]], ws .. "/cmd/main_test.go")
    type_keys(chars(" #"))
    type_keys(chars("cmd"))
    s = e:lua(STATE)
    t.eq("@main.go #cmd", s.line)
    t.ok(s.menu and vim.tbl_contains(s.words, "#cmd/main_test.go"), vim.inspect(s))
    -- Leaving the input gives 'completeopt' back.
    type_keys({ "<Esc>" })
    t.eq("menu,preview", e:lua("return vim.o.completeopt"))
  end)

  it("/ offers kin's commands before kin has started, and keeps what is typed", function()
    type_keys({ "i", "/" })
    local s = e:lua(STATE)
    t.ok(not s.running, "kin has not started")
    t.ok(s.menu, "the menu opened at /")
    t.eq("/", s.line)
    for _, w in ipairs({ "/compact ", "/undo ", "/plan ", "/mode ", "/model ", "/grants ", "/mcp " }) do
      t.ok(vim.tbl_contains(s.words, w), w .. " offered: " .. vim.inspect(s.words))
    end
    type_keys(chars("ev"))
    s = e:lua(STATE)
    t.eq("/ev", s.line, "what was typed, not /compact ev")
    -- A command picked from the menu.
    type_keys({ "<BS>", "<BS>", "u", "<C-n>", "<C-y>" })
    t.eq("/undo ", e:lua(STATE).line)
  end)

  it("/ offers the session's commands from commands/list once kin answers", function()
    e:lua([[require("kin.chat").ask("hello")]])
    e:wait([[
      local tr = require("kin.chat").current()
      return tr.last == "end" and not tr.running
    ]], "the first turn to end")
    e:lua([[vim.api.nvim_set_current_win(require("kin.chat").state.input_win)]])
    type_keys({ "i", "/" })
    e:wait([[return require("kin.complete").state.for_session == require("kin.chat").state.current]],
      "commands/list's answer")
    local s = e:lua(STATE)
    t.eq("/", s.line)
    t.ok(s.menu and vim.tbl_contains(s.words, "/compact "), vim.inspect(s))
    local asked = e:lua([[
      local n = 0
      for _, l in ipairs(require("kin.service").ctx.client.trace) do
        local ok, m = pcall(vim.json.decode, l:sub(4))
        if ok and type(m) == "table" and m.method == "commands/list" then n = n + 1 end
      end
      return n
    ]])
    t.eq(1, asked, "commands/list asked once")
  end)
end)
