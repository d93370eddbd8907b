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
end, { nargs = "*", desc = "kin: start a new session" })

cmd("KinSessions", function()
  kin().sessions()
end, { desc = "kin: resume or delete a session" })

cmd("KinMcp", function()
  kin().mcp()
end, { desc = "kin: manage MCP servers" })

cmd("KinGrants", function()
  kin().grants()
end, { desc = "kin: list and revoke grants" })

cmd("KinLog", function()
  kin().log()
end, { desc = "kin: open kin's log file" })

cmd("KinRestart", function()
  kin().restart()
end, { desc = "kin: restart the service" })
