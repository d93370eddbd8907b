-- The chat's title bar (the transcript window's 'winbar'): the session's mode and model, how
-- full the model's window is (turn/usage), and while a turn runs a progress indicator saying
-- what kin is doing (thinking, compacting, running a tool, waiting for the person's answer).
local M = {}

local SPIN = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }

---@class kin.StatusState
---@field timer uv.uv_timer_t?
---@field frame integer
M.state = { frame = 1 }

--- Tokens as a person reads them: 812, 3.8k, 1.2M.
function M.tokens(n)
  n = tonumber(n) or 0
  if n >= 1e6 then
    return (("%.1fM"):format(n / 1e6):gsub("%.0M", "M"))
  elseif n >= 1000 then
    return (("%.1fk"):format(n / 1000):gsub("%.0k", "k"))
  end
  return tostring(math.floor(n))
end

--- The context gauge: "ctx 2.1k/400k 1%" (nil before the first turn/usage).
function M.gauge(usage)
  if type(usage) ~= "table" or not tonumber(usage.contextWindow) or usage.contextWindow <= 0 then
    return nil
  end
  local used = tonumber(usage.contextTokens) or 0
  local pct = math.floor(used * 100 / usage.contextWindow + 0.5)
  local bar_n = 10
  local full = math.min(bar_n, math.floor(used * bar_n / usage.contextWindow + 0.5))
  return ("ctx %s %s/%s %d%%"):format(
    string.rep("█", full) .. string.rep("░", bar_n - full),
    M.tokens(used),
    M.tokens(usage.contextWindow),
    pct
  )
end

--- What a running turn is doing now.
function M.activity(tr)
  if tr.compacting and not tr.running then
    -- :KinCompact between turns.
    return ("%s compacting"):format(SPIN[M.state.frame])
  end
  if not tr.running then
    return nil
  end
  local doing = "thinking"
  local running
  for _, t in pairs(tr.tools or {}) do
    if t.status == "awaiting_approval" then
      return "waiting for your answer (:KinAnswer)"
    elseif t.status == "running" or t.status == "working" or t.status == "pending" then
      running = t.name
    end
  end
  if running then
    doing = "running " .. running
  elseif tr.reasoning_open then
    doing = "reasoning"
  elseif tr.last == "text" then
    doing = "answering"
  end
  if tr.compacting then
    doing = "compacting" -- the model is asked for a summary, not for the answer
  end
  local secs = tr.started_at and math.floor((vim.uv.now() - tr.started_at) / 1000) or 0
  return ("%s %s %ds"):format(SPIN[M.state.frame], doing, secs)
end

--- The whole title bar text of a transcript (plain text, for tests; winbar() escapes it).
function M.text(tr)
  local parts = { "kin" }
  if tr.mode then
    parts[#parts + 1] = tr.mode
  end
  if tr.model then
    parts[#parts + 1] = tr.model .. (tr.effort and (" (" .. tr.effort .. ")") or "")
  end
  if tr.read_only then
    parts[#parts + 1] = tostring(tr.read_only):find("another kin", 1, true) and "read-only (open in another kin)" or "read-only"
  end
  local g = M.gauge(tr.usage)
  if g then
    parts[#parts + 1] = g
  end
  local cost = require("kin.usage").cost(tr.usage)
  if cost then
    parts[#parts + 1] = cost
  end
  local a = M.activity(tr)
  if a then
    parts[#parts + 1] = a
  end
  local building = require("kin.build").progress()
  if building then
    parts[#parts + 1] = SPIN[M.state.frame] .. " " .. building
  end
  local open = #require("kin.prompts").items()
  if open > 0 and not (a and a:find("waiting for your answer", 1, true)) then
    parts[#parts + 1] = ("%d question%s open (:KinAnswer)"):format(open, open == 1 and "" or "s")
  end
  return table.concat(parts, " · ")
end

--- 'winbar' of the transcript window.
function M.winbar()
  local tr = require("kin.transcript").by_buf[vim.api.nvim_get_current_buf()]
  if not tr then
    return ""
  end
  return " " .. M.text(tr):gsub("%%", "%%%%")
end

local function any_running()
  if require("kin.build").running() then
    return true
  end
  for _, tr in pairs(require("kin.chat").state.transcripts) do
    if tr.running or tr.compacting then
      return true
    end
  end
  return false
end

--- Redraws the title bars now, and keeps the indicator turning while a turn runs.
function M.refresh()
  pcall(vim.cmd, "redrawstatus!")
  local st = M.state
  if any_running() then
    if not st.timer then
      st.timer = vim.uv.new_timer()
      st.timer:start(120, 120, vim.schedule_wrap(function()
        if not any_running() then
          if st.timer then
            st.timer:stop()
            st.timer:close()
            st.timer = nil
          end
        else
          st.frame = st.frame % #SPIN + 1
        end
        pcall(vim.cmd, "redrawstatus!")
      end))
    end
  end
end

return M
