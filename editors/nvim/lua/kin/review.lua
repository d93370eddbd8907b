-- kin.nvim: a review's findings (review/finding, and session/resume's findings) in the quickfix
-- list and as vim.diagnostic on their lines. The review itself runs in kin (review/start, or
-- /review sent as a question); this only shows what it reports. Titles and bodies are the
-- model's text: shown, never run.
local M = {}

M.ns = vim.api.nvim_create_namespace("kin_review")

-- Per session: the findings shown, and the quickfix list they are in (its id).
M.state = { findings = {}, qf = {} }

local severities = {
  error = vim.diagnostic.severity.ERROR,
  warning = vim.diagnostic.severity.WARN,
  info = vim.diagnostic.severity.INFO,
}
local qf_types = { error = "E", warning = "W", info = "I" }

-- A finding's lines, 1-based and inclusive: its range covers whole lines, ending at character
-- 0 of the line after the last.
local function lines(f)
  local first = f.range.start.line + 1
  local last = math.max(f.range["end"].line, first)
  return first, last
end

--- The quickfix item of a finding.
function M.qf_item(f)
  local first, last = lines(f)
  local body = (f.body or ""):gsub("%s*\n%s*", " ")
  return {
    filename = f.file,
    lnum = first,
    end_lnum = last,
    col = 1,
    type = qf_types[f.severity] or "I",
    text = f.title .. (body ~= "" and (": " .. body) or ""),
  }
end

--- The vim.diagnostic of a finding (0-based lines, as vim.diagnostic counts).
function M.diagnostic(f)
  local first, last = lines(f)
  local msg = f.title
  if f.body and f.body ~= "" then
    msg = msg .. "\n" .. f.body
  end
  return {
    lnum = first - 1,
    end_lnum = last - 1,
    col = 0,
    end_col = 0,
    severity = severities[f.severity] or vim.diagnostic.severity.INFO,
    message = msg,
    source = "kin review",
  }
end

-- Sets the diagnostics of every file with findings of the session (a file's buffer is added,
-- not loaded, so they show once it is opened).
local function show_diagnostics(sid)
  local by_buf = {}
  for _, f in ipairs(M.state.findings[sid] or {}) do
    local buf = vim.fn.bufadd(f.file)
    by_buf[buf] = by_buf[buf] or {}
    table.insert(by_buf[buf], M.diagnostic(f))
  end
  for buf, ds in pairs(by_buf) do
    vim.diagnostic.set(M.ns, buf, ds)
  end
end

-- Puts the session's findings in its quickfix list (made at its first finding, replaced after).
local function show_qf(sid)
  local items = {}
  for _, f in ipairs(M.state.findings[sid] or {}) do
    table.insert(items, M.qf_item(f))
  end
  local id = M.state.qf[sid]
  if id and vim.fn.getqflist({ id = id }).id == id then
    vim.fn.setqflist({}, "r", { id = id, items = items })
  else
    vim.fn.setqflist({}, " ", { title = "kin review " .. sid, items = items })
    M.state.qf[sid] = vim.fn.getqflist({ id = 0 }).id
  end
end

local function valid(f)
  return type(f) == "table" and type(f.file) == "string" and type(f.title) == "string"
    and type(f.range) == "table" and type(f.range.start) == "table" and type(f.range["end"]) == "table"
end

--- review/finding: one more finding of a running review, shown at once.
function M.on_finding(p)
  if not valid(p) or not p.sessionId then
    return
  end
  local list = M.state.findings[p.sessionId] or {}
  M.state.findings[p.sessionId] = list
  table.insert(list, p)
  vim.schedule(function()
    show_qf(p.sessionId)
    show_diagnostics(p.sessionId)
  end)
end

--- session/resume's result: the session's findings, all of them (they replace what was shown).
function M.on_resume(result)
  local sid = result and result.session and result.session.sessionId
  if not sid or type(result.findings) ~= "table" or #result.findings == 0 then
    return
  end
  local list = {}
  for _, f in ipairs(result.findings) do
    if valid(f) then
      table.insert(list, f)
    end
  end
  M.state.findings[sid] = list
  vim.schedule(function()
    show_qf(sid)
    show_diagnostics(sid)
  end)
end

--- :KinReview [base NAME | commit SHA]: asks kin for a review (/review) in the chat's session.
function M.start(args)
  local input = "/review"
  if args and vim.trim(args) ~= "" then
    input = input .. " " .. vim.trim(args)
  end
  require("kin.chat").ask(input)
end

--- Clears every finding shown (:KinReviewClear).
function M.clear()
  M.state.findings, M.state.qf = {}, {}
  vim.diagnostic.reset(M.ns)
end

return M
