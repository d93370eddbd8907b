-- Worktrees (PROTOCOL.md, Worktrees): a session in a git worktree of its own.
--   :KinNew --worktree[=BRANCH] [title]   a new session in a worktree (kin/<short id> unless named)
--   :KinWorktree [status]                  branch, changes (into the quickfix list), ahead/behind
--   :KinWorktree apply                     the worktree's changes into the checkout, uncommitted
--   :KinWorktree remove[!]                 remove it and its branch (! even with unapplied changes)
local service = require("kin.service")

local M = {}

M.code = -32020

--- Splits :KinNew's arguments: "--worktree", "--worktree=BRANCH" (anywhere) and the title.
--- Returns the title (nil when none) and session/new's worktree (nil, true or {branch=...}).
function M.parse_new(args)
  local worktree, words = nil, {}
  for w in tostring(args or ""):gmatch("%S+") do
    local branch = w:match("^%-%-worktree=(.+)$")
    if branch then
      worktree = { branch = branch }
    elseif w == "--worktree" then
      worktree = true
    else
      words[#words + 1] = w
    end
  end
  local title = table.concat(words, " ")
  return title ~= "" and title or nil, worktree
end

--- A -32020 error's kind and paths ({kind=nil} for any other error).
function M.decode_error(err)
  if type(err) ~= "table" or err.code ~= M.code or type(err.data) ~= "table" then
    return { kind = nil, paths = {} }
  end
  return { kind = err.data.kind, paths = err.data.paths or {} }
end

local function short(sha)
  return type(sha) == "string" and sha:sub(1, 10) or "?"
end

--- The session object's worktree as one line ("" without one).
function M.describe(wt)
  if type(wt) ~= "table" then
    return ""
  end
  return ("worktree %s on %s (from %s at %s)"):format(tostring(wt.path), tostring(wt.branch), tostring(wt.baseBranch), short(wt.base))
end

--- worktree/status's result as lines a person reads.
function M.status_lines(st)
  local state = { ("%d ahead"):format(st.ahead or 0), ("%d behind %s"):format(st.behind or 0, tostring(st.baseBranch)) }
  if st.uncommitted then
    state[#state + 1] = "uncommitted changes"
  end
  if st.unapplied then
    state[#state + 1] = "not applied"
  elseif #(st.files or {}) > 0 then
    state[#state + 1] = "applied"
  end
  local lines = { ("%s  %s"):format(tostring(st.branch), tostring(st.path)), "  " .. table.concat(state, ", ") }
  if #(st.files or {}) == 0 then
    lines[#lines + 1] = "  no changes since " .. short(st.base)
  end
  for _, f in ipairs(st.files or {}) do
    lines[#lines + 1] = ("  %-11s %s"):format(tostring(f.status), tostring(f.path))
  end
  return lines
end

--- Quickfix items for paths below dir (text: why).
function M.qf_items(dir, files, text)
  local items = {}
  for _, f in ipairs(files or {}) do
    local path = type(f) == "table" and f.path or f
    local why = type(f) == "table" and f.status or text
    items[#items + 1] = { filename = tostring(dir) .. "/" .. tostring(path), lnum = 1, text = "kin worktree: " .. tostring(why) }
  end
  return items
end

local function set_qf(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
end

local function session()
  local sid = require("kin.chat").state.current
  if not sid then
    service.notify("no session yet: :KinNew --worktree starts one in a worktree", vim.log.levels.INFO)
  end
  return sid
end

-- A refusal: the message, the paths (into the quickfix list, below root) and what to do next.
local function refused(what, err, root)
  local e = M.decode_error(err)
  if not e.kind then
    local busy = err and err.code == -32011
    service.notify(what .. (busy and ": a turn is running; after it ends" or " failed") .. ": " .. tostring(err and err.message),
      busy and vim.log.levels.WARN or vim.log.levels.ERROR)
    return e
  end
  local msg = tostring(err.message)
  if e.kind == "conflict" then
    msg = msg .. "\nnothing was changed: commit, stash or undo those paths in the checkout, then :KinWorktree apply"
  elseif e.kind == "unapplied" then
    msg = msg .. "\n:KinWorktree apply brings them to the checkout; :KinWorktree remove! drops them"
  elseif e.kind == "shared" then
    msg = msg .. "\n:KinWorktree! remove removes it anyway (those sessions keep their history, not the folder)"
  end
  if #e.paths > 0 and root then
    set_qf("kin: " .. e.kind, M.qf_items(root, e.paths, e.kind))
  end
  service.notify(msg, vim.log.levels.WARN)
  return e
end

--- :KinNew --worktree[=BRANCH] [title]
function M.new(title, worktree, cb)
  require("kin.chat").new_session(title, cb, { worktree = worktree }, function(err)
    refused("session/new in a worktree", err)
  end)
end

function M.status(cb)
  local sid = session()
  if not sid then
    return
  end
  service.request("worktree/status", { sessionId = sid }, function(st)
    set_qf("kin: worktree " .. tostring(st.branch), M.qf_items(st.path, st.files))
    service.notify(table.concat(M.status_lines(st), "\n"))
    if cb then
      cb(st)
    end
  end, function(err)
    refused("worktree/status", err)
  end)
end

function M.apply(cb)
  local sid = session()
  if not sid then
    return
  end
  local repo = (require("kin.chat").state.worktrees or {})[sid]
  service.request("worktree/apply", { sessionId = sid }, function(r)
    local files = r.files or {}
    if #files == 0 then
      service.notify("the worktree has no changes to apply")
    else
      local lines = { ("applied %d file%s to the checkout as uncommitted changes"):format(#files, #files == 1 and "" or "s") }
      for _, p in ipairs(r.runsLater or {}) do
        lines[#lines + 1] = p .. " makes something run later: look at it before you commit"
      end
      service.notify(table.concat(lines, "\n"), #(r.runsLater or {}) > 0 and vim.log.levels.WARN or nil)
      if repo then
        set_qf("kin: applied", M.qf_items(repo, files))
      end
      vim.cmd("checktime")
    end
    if cb then
      cb(r)
    end
  end, function(err)
    refused("worktree/apply", err, repo)
    if cb then
      cb(nil, err)
    end
  end)
end

function M.remove(force, cb)
  local sid = session()
  if not sid then
    return
  end
  service.request("worktree/remove", { sessionId = sid, force = force or nil }, function(r)
    local msg = "removed the worktree and its branch " .. tostring(r.branch)
    if r.commit then
      msg = msg .. (" (git branch %s %s brings it back)"):format(r.branch, r.commit)
    end
    service.notify(msg)
    if cb then
      cb(r)
    end
  end, function(err)
    refused("worktree/remove", err, (require("kin.chat").state.worktrees or {})[sid])
    if cb then
      cb(nil, err)
    end
  end)
end

--- :KinWorktree [status|apply|remove] (bang: force)
function M.command(sub, bang)
  sub = (sub == nil or sub == "") and "status" or sub
  if sub == "status" then
    M.status()
  elseif sub == "apply" then
    M.apply()
  elseif sub == "remove" then
    M.remove(bang)
  else
    service.notify("KinWorktree: status, apply or remove, not " .. sub, vim.log.levels.ERROR)
  end
end

--- Remembers a session's worktree (session/new, session/resume) and says where it works.
function M.remember(result)
  local s = type(result) == "table" and result.session or nil
  if type(s) ~= "table" or type(s.worktree) ~= "table" then
    return
  end
  local chat = require("kin.chat")
  chat.state.worktrees = chat.state.worktrees or {}
  chat.state.worktrees[s.sessionId] = s.worktree.repo
  service.notify("kin: " .. M.describe(s.worktree))
end

return M
