-- A subagent end to end, against the real `kin serve` and the scripted mock model (tests/rules.json,
-- "please delegate 77"): the model delegates a task; the subagent's command asks for approval with
-- the subagent's sessionId and parentSessionId; kin.nvim shows it labelled as the subagent's, the
-- person allows it, and the subagent's call and answer are drawn under the delegate call.
local t = require("harness")

local kin = require("realkin")
kin.need_kin()

local env = {}

before_each(function()
  kin.fresh(env)
  kin.setup(env)
end)

describe("real kin: subagents", function()
  it("a subagent's approval is shown and answered on the parent, its progress under the delegate call", function()
    vim.cmd("KinChat please delegate 77")
    local shown
    t.wait_for(function()
      if kin.turn_over() and kin.text():find("The subagent reported sub-ok-77.", 1, true) then
        return true
      end
      local q = t.panel() and require("kin.prompts").current()
      if q and not shown then
        shown = { title = q.title, params = q.params, body = t.panel_body() }
        vim.schedule(function()
          t.press("a")
        end)
      end
      return false
    end, "the parent's turn to end after the subagent's answer", 40000)
    t.ok(shown, "the subagent's approval was shown")
    t.contains(shown.title, "[subagent: subagent-task-77: run the echo]")
    t.contains(shown.body, "echo sub-ok-$((70+7))")
    local parent = require("kin.chat").state.current
    t.eq(parent, shown.params.parentSessionId, "the approval names the open session as its parent")
    t.ok(shown.params.sessionId ~= parent, "and the subagent's own session")
    t.eq("allow_once", kin.sent("approval/respond")[1].params.decision)
    local text = kin.text()
    t.contains(text, "[tool] delegate: ")
    t.contains(text, "↳ subagent completed: 1 call · done")
    t.contains(text, "- Run echo sub-ok-$((70+7)) (completed)")
    t.contains(text, "┊ Subagent ran it: sub-ok-77.")
    t.eq(1, select(2, text:gsub("## You", "")), "the subagent's task is not a question of the parent's")
    t.eq(nil, require("kin.chat").state.transcripts[shown.params.sessionId], "no transcript of the subagent's own")
  end)
end)
