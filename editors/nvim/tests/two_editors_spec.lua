-- Two Neovims on one kin home (two `kin serve`s): the session the first has open is read-only in
-- the second, which says so (kin answers -32011 "…open in another kin…" on turn/start and
-- readOnly on session/resume), and whose :KinCancel does not claim that no turn runs.
local t = require("harness")
local kin = require("realkin")
local embedded = require("embedded")
kin.need_kin()

local env = {}
local e -- the second Neovim

before_each(function()
  kin.fresh(env)
  kin.setup(env)
end)

after_each(embedded.stop_all)

-- The second Neovim's notifications since the last call, as one text.
local function notes()
  return e:lua([[
    local out = {}
    for _, n in ipairs(_G.kin_notes) do out[#out + 1] = n.msg end
    _G.kin_notes = {}
    return table.concat(out, "\n")
  ]])
end

describe("two Neovims on one session", function()
  it("the second says the session is open in another kin, read-only there; its questions are kept and :KinCancel does not contradict it", function()
    -- The first Neovim (this one) asks: its kin owns the session, and runs a turn in it.
    kin.ask_and_wait("hello one")
    local sid = require("kin.chat").state.current
    require("kin").ask("please wait for me")
    t.wait_for(function()
      return kin.current().running and kin.text():find("please wait for me", 1, true)
    end, "the first Neovim's turn to run")

    e = embedded.with_kin(env.ws, env.home)
    e:lua([[require("kin.chat").resume(...)]], sid)
    e:wait(([[return require("kin.chat").state.current == %q and require("kin.chat").current().read_only ~= nil]]):format(sid),
      "the resumed session", 60000)
    local said = notes()
    t.contains(said, "this session is open in another kin")
    t.contains(said, "read-only here")
    local shown = e:lua([[
      local tr = require("kin.chat").current()
      return { bar = require("kin.status").text(tr), text = tr:text_content() }
    ]])
    t.contains(shown.bar, "read-only (open in another kin)")
    t.contains(shown.text, "hello one", "the history is shown")

    -- A question there is refused by kin, kept in the input, and the reason is the real one.
    e:lua([[vim.cmd("KinChat"); require("kin").ask("hello two")]])
    e:wait([[return #_G.kin_notes > 0]], "kin's refusal")
    said = notes()
    t.contains(said, "open in another kin")
    t.contains(said, "your question is kept")
    t.not_contains(said, "a turn is already running")
    t.eq({ "hello two" }, e:lua([[return vim.api.nvim_buf_get_lines(require("kin.chat").state.input_buf, 0, -1, false)]]))

    -- :KinCancel there cannot stop the first Neovim's turn, and says why (not "no turn is running").
    e:lua([[vim.cmd("KinCancel")]])
    e:wait([[return #_G.kin_notes > 0]], ":KinCancel's answer")
    said = notes()
    t.contains(said, "open in another kin")
    t.contains(said, "can be stopped only there")
    t.not_contains(said, "no turn is running")
    t.ok(kin.current().running, "the first Neovim's turn still runs")

    -- Once the first Neovim's kin is gone, the session is the second's.
    vim.cmd("KinCancel")
    t.wait_for(kin.turn_over, "the first Neovim's turn to end", 60000)
    require("kin.service").stop()
    e:lua([[require("kin").ask("hello three")]])
    e:wait([[
      local tr = require("kin.chat").current()
      return tr:text_content():find("hello three", 1, true) and tr.last == "end" and not tr.running
    ]], "the second Neovim's turn", 60000)
    local after = e:lua([[
      local tr = require("kin.chat").current()
      return { bar = require("kin.status").text(tr), text = tr:text_content() }
    ]])
    t.not_contains(after.bar, "read-only")
    t.contains(after.text, "hello three\n\n## kin\n\nHello from the mock.")
  end)
end)
