-- :KinGrants — list what kin allows without asking (grants/list) and revoke one.
local service = require("kin.service")

local M = {}

function M.format(g)
  local where = g.scope == "session" and ("session " .. tostring(g.sessionId or "")) or tostring(g.scope)
  return ("%s  [%s, %s]"):format(g.label or g.key or g.id, g.type or "?", where)
end

function M.open()
  service.request("grants/list", {}, function(result)
    local grants = result.grants or {}
    if #grants == 0 then
      service.notify("no grants: kin asks before every action")
      return
    end
    vim.ui.select(grants, { prompt = "kin: revoke a grant", format_item = M.format, kind = "kin.grants" }, function(g)
      if not g then
        return
      end
      vim.ui.select({ "Revoke", "Cancel" }, { prompt = "Revoke " .. M.format(g) .. "?" }, function(c)
        if c == "Revoke" then
          service.request("grants/revoke", { id = g.id }, function()
            service.notify("revoked: " .. (g.label or g.id))
          end)
        end
      end)
    end)
  end)
end

return M
