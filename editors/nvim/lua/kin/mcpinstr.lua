-- A server's own instructions in :KinMcp: shown in a scratch buffer, and when kin says they
-- changed since the person trusted the server (instructionsPending), offered for acceptance
-- (mcp/acceptInstructions with the instructionsHash shown, so only the text on screen is
-- accepted). kin decides what reaches the model; this only shows and sends the answer.
local service = require("kin.service")

local M = {}

--- What a server row adds to its line: "" when there is nothing to say.
function M.badge(row)
  if row.instructionsPending then
    return "  ⚠ instructions changed: accept to send them"
  end
  return ""
end

--- The lines shown for a row's instructions.
function M.lines(row)
  local status = "accepted: sent to the model as the server's untrusted text"
  if row.instructionsPending then
    status = "CHANGED since you trusted it: withheld from the model until you accept them"
  end
  local out = {
    ("MCP server %s: instructions (%s)"):format(row.name, status),
    "hash: " .. tostring(row.instructionsHash or "?"),
    "",
  }
  for _, l in ipairs(vim.split(row.instructions or "", "\n", { plain = true })) do
    out[#out + 1] = l
  end
  return out
end

--- Answers acceptance: sends mcp/acceptInstructions for exactly the hash shown.
function M.accept(row, cb)
  service.request("mcp/acceptInstructions", { name = row.name, hash = row.instructionsHash }, function(result)
    if result and result.accepted then
      service.notify(("%s: instructions accepted; the model gets them from the next request on"):format(row.name))
    end
    if cb then
      cb(result)
    end
  end)
end

--- Shows a row's instructions in a scratch buffer; pending ones are then offered for acceptance.
function M.show(row)
  -- Shown already: that view goes (it may be older text); a second buffer of the same name
  -- cannot be made (the rename failed with an error, leaving an empty buffer behind).
  local name = "kin://mcp/" .. row.name .. "/instructions"
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then
      vim.api.nvim_buf_delete(b, { force = true })
    end
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines(row))
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_name(buf, name)
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  if not row.instructionsPending then
    return
  end
  vim.schedule(function()
    vim.ui.select({ "Accept these instructions", "Not now" }, {
      prompt = ("Send %s's changed instructions to the model?"):format(row.name),
    }, function(c)
      if c == "Accept these instructions" then
        M.accept(row)
      end
    end)
  end)
end

return M
