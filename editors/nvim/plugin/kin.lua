-- kin.nvim: commands only; everything else loads on first use (see :help kin).
if vim.g.loaded_kin then
  return
end
vim.g.loaded_kin = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify("kin.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

local function kin()
  return require("kin")
end

local cmd = vim.api.nvim_create_user_command

cmd("KinChat", function(o)
  kin().chat(o.args)
end, { nargs = "*", desc = "kin: open the chat (and ask the question given)" })

cmd("KinSend", function(o)
  kin().send({ range = o.range, line1 = o.line1, line2 = o.line2, question = o.args })
end, { nargs = "*", range = true, desc = "kin: ask about the selection or the file" })

cmd("KinAnswer", function()
  kin().answer()
end, { desc = "kin: go to kin's window to answer what it asks" })

cmd("KinMode", function(o)
  kin().mode(o.args)
end, {
  nargs = "?",
  complete = function()
    return { "ask", "agent", "auto-edit" }
  end,
  desc = "kin: the session's mode (ask, agent, auto-edit)",
})

cmd("KinModel", function(o)
  kin().model(o.args)
end, { nargs = "*", desc = "kin: the session's model and reasoning effort" })

cmd("KinCompact", function()
  kin().compact()
end, { desc = "kin: summarise the conversation so far to free context" })

cmd("KinUndo", function(o)
  kin().undo(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "kin: undo the file changes of the last turn (or of a turn)" })

cmd("KinFork", function(o)
  kin().fork(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "kin: continue in a copy of this session (up to a turn)" })

cmd("KinRollback", function(o)
  kin().rollback(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "kin: take back the last N turns (1): the model forgets them, their file changes are undone" })


cmd("KinReview", function(o)
  require("kin.review").start(o.args)
end, { nargs = "*", desc = "kin: review the uncommitted changes (or base NAME, or commit SHA); findings in quickfix" })

cmd("KinReviewClear", function()
  require("kin.review").clear()
end, { desc = "kin: clear the review findings shown" })

cmd("KinRetry", function()
  kin().retry()
end, { desc = "kin: ask the last question again" })

cmd("KinEdit", function()
  kin().edit_last()
end, { desc = "kin: edit the last question and send it again" })

cmd("KinAttach", function(o)
  local what, rest = o.args:match("^%s*(%S*)%s*(.-)%s*$")
  kin().attach({ range = o.range, line1 = o.line1, line2 = o.line2, what = what, path = rest ~= "" and rest or nil })
end, {
  nargs = "*",
  range = true,
  complete = function(lead, line)
    if line:match("KinAttach!?%s+image%s") then
      return vim.fn.getcompletion(lead, "file")
    end
    return vim.tbl_filter(function(w)
      return w:find(lead, 1, true) == 1
    end, { "file", "selection", "diagnostics", "image", "clear" })
  end,
  desc = "kin: attach the file, the selection, its diagnostics or an image to the next question",
})

cmd("KinCancel", function()
  kin().cancel()
end, { desc = "kin: cancel the running turn" })

cmd("KinNew", function(o)
  kin().new(o.args)
end, {
  nargs = "*",
  complete = function(lead)
    return vim.startswith("--worktree", lead) and { "--worktree", "--worktree=" } or {}
  end,
  desc = "kin: start a new session (--worktree[=BRANCH]: in a git worktree of its own)",
})

cmd("KinWorktree", function(o)
  kin().worktree(o.args, o.bang)
end, {
  nargs = "?",
  bang = true,
  complete = function()
    return { "status", "apply", "remove" }
  end,
  desc = "kin: the session's git worktree: status, apply its changes, remove it (! even unapplied)",
})

cmd("KinSessions", function()
  kin().sessions()
end, { desc = "kin: resume or delete a session" })

cmd("KinSaw", function(o)
  require("kin.resources").show(o.args)
end, {
  nargs = "?",
  complete = function()
    return require("kin.resources").call_ids()
  end,
  desc = "kin: what the model saw of a tool call's result (the last one)",
})

cmd("KinResource", function(o)
  require("kin.resources").command(o.args)
end, {
  nargs = "+",
  complete = function(arglead, cmdline)
    return require("kin.resources").complete_command(arglead, cmdline)
  end,
  desc = "kin: open an MCP server's resource to read ({server} {uri})",
})

cmd("KinMcp", function()
  kin().mcp()
end, { desc = "kin: manage MCP servers" })

cmd("KinGrants", function()
  kin().grants()
end, { desc = "kin: list and revoke grants" })

cmd("KinUsage", function()
  require("kin.usage").show()
end, { desc = "kin: tokens and cost of this session and today, with the spend limits" })

cmd("KinLog", function()
  kin().log()
end, { desc = "kin: open kin's log file" })

cmd("KinBuild", function()
  kin().build()
end, { desc = "kin: build kin from this repository (in the background)" })

cmd("KinRestart", function()
  kin().restart()
end, { desc = "kin: restart the service" })
