-- Steering, :KinRollback and :KinFork from Neovim against the real kin and the scripted mock
-- model (tests/rules.json): sending while a turn runs adds the words to it.
local t = require("harness")

local kin = require("realkin")
kin.need_kin()

local env = {}

before_each(function()
  kin.fresh(env)
  vim.fn.writefile({ "alpha", "gamma" }, env.ws .. "/notes.txt")
  kin.setup(env)
end)

local tr, turn_over, text, ask_and_wait = kin.current, kin.turn_over, kin.text, kin.ask_and_wait

describe("branching", function()
  it("sending while a turn runs steers it; :KinRollback undoes the last turn; :KinFork continues in a copy", function()
    vim.cmd("KinChat")
    require("kin").ask("please steer me")
    t.wait_for(function()
      return tr() and tr().running and tr().turn_id
    end, "the turn to start", 60000)
    local buf = require("kin.chat").state.input_buf
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "nvim-steer-words" })
    require("kin.chat").send_input()
    t.wait_for(function()
      return text():find("you added:** nvim-steer-words", 1, true)
    end, "the steered words in the transcript", 60000)
    t.wait_for(function()
      return text():find("Steered reply.", 1, true)
    end, "the answer to the steered words", 60000)
    t.wait_for(turn_over, "the turn to end", 60000)
    t.eq({ "" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "the input is cleared once kin took the words")

    vim.cmd("KinMode auto-edit")
    ask_and_wait("please edit notes")
    t.eq({ "beta", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"))
    vim.cmd("KinRollback")
    t.wait_for(function()
      return text():find("[rollback] 1 turn taken back", 1, true)
    end, "the rollback", 60000)
    t.eq({ "alpha", "gamma" }, vim.fn.readfile(env.ws .. "/notes.txt"), "put back")

    local orig = tr().session_id
    vim.cmd("KinFork")
    t.wait_for(function()
      return tr() and tr().session_id ~= orig
    end, "the fork to become current", 60000)
    t.wait_for(function()
      return text():find("[fork] forked from " .. orig, 1, true)
    end, "the fork's history", 60000)
    t.contains(text(), "nvim-steer-words")
  end)
end)
