-- kin.branching: going back and adding a word (rpc/PROTOCOL.md, Branching). Sending while a turn
-- runs adds the words to it (turn/steer: they join at its next model request); :KinFork
-- continues in a copy of the session (session/fork); :KinRollback [N] takes back the last N turns
-- (turn/rollback: the model forgets them and their file changes are undone as :KinUndo does).
local service = require("kin.service")

local M = {}

local function chat()
  return require("kin.chat")
end

local function notify(msg, level)
  service.notify(msg, level)
end

--- Whether sending on this transcript adds to its running turn.
function M.steers(t)
  return t ~= nil and t.running == true and t.turn_id ~= nil
end

--- Adds input (a string or input parts) to the current session's running turn. on_ok runs once
--- kin queued it; on_failed(err) when it did not (the text is then the caller's to keep).
function M.steer(input, on_ok, on_failed)
  local t = chat().current()
  if not M.steers(t) then
    notify("no turn is running: send it as a question", vim.log.levels.INFO)
    return
  end
  service.request("turn/steer", { sessionId = t.session_id, turnId = t.turn_id, input = input }, function(result)
    if on_ok then
      on_ok(result)
    end
  end, function(err)
    if err.code == -32016 then
      notify("the turn has ended: your words were not added; send them as a question", vim.log.levels.WARN)
    else
      notify("turn/steer failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end
    if on_failed then
      on_failed(err)
    end
  end)
end

--- turn/steered: the words joined the turn here; the transcript shows them at this point.
function M.on_steered(p)
  if type(p) ~= "table" or not p.sessionId then
    return
  end
  M.show_steer(chat().transcript(p.sessionId), p.input)
end

function M.show_steer(t, text)
  t:meta("> **you added:** " .. tostring(text or ""):gsub("\n", "\n> "))
end

--- What a turn/rollback did, each turn's undo as :KinUndo shows it.
function M.show_rollback(t, r)
  local turns = r.turns or {}
  t:meta(("[rollback] %d turn%s taken back: %s (the model no longer sees %s)"):format(
    #turns, #turns == 1 and "" or "s", table.concat(turns, ", "), #turns == 1 and "it" or "them"))
  for _, u in ipairs(r.undos or {}) do
    t:undo(u, "rollback:" .. tostring(u.turnId))
  end
  for _, e in ipairs(r.errors or {}) do
    t:meta(("[rollback] turn %s not undone: %s"):format(tostring(e.turnId), tostring(e.error)))
  end
end

--- Redraws history's steer, rollback and fork items; true when item was one.
function M.history_item(t, item)
  if item.type == "steer" then
    M.show_steer(t, item.text)
  elseif item.type == "rollback" and item.rollback then
    M.show_rollback(t, item.rollback)
  elseif item.type == "fork" and item.fork then
    t:meta("[fork] forked from " .. tostring(item.fork.sessionId))
  else
    return false
  end
  return true
end

--- :KinRollback [N]
function M.rollback(n, cb)
  local t = chat().current()
  if not (t and t.session_id) then
    notify("no session yet: nothing to roll back", vim.log.levels.INFO)
    return
  end
  n = tonumber(n) or 1
  service.request("turn/rollback", { sessionId = t.session_id, turns = n }, function(result)
    M.show_rollback(t, result)
    notify(("rolled back %d turn%s"):format(#(result.turns or {}), #(result.turns or {}) == 1 and "" or "s"), vim.log.levels.INFO)
    if cb then
      cb(result)
    end
  end, function(err)
    if err.code == -32011 then
      notify("a turn is running: roll back after it ends (:KinCancel stops it)", vim.log.levels.WARN)
    else
      notify("turn/rollback failed: " .. tostring(err.message), vim.log.levels.ERROR)
    end
    if cb then
      cb(nil, err)
    end
  end)
end

--- :KinFork [turnId]: the copy becomes the current session.
function M.fork(turn_id, cb)
  local t = chat().current()
  if not (t and t.session_id) then
    notify("no session yet: nothing to fork", vim.log.levels.INFO)
    return
  end
  service.request("session/fork", { sessionId = t.session_id, turnId = turn_id }, function(result)
    chat().resume(result.session.sessionId, function()
      notify("forked into " .. result.session.sessionId .. "; your next question continues the fork", vim.log.levels.INFO)
      if cb then
        cb(result)
      end
    end)
  end, function(err)
    notify("session/fork failed: " .. tostring(err.message), vim.log.levels.ERROR)
    if cb then
      cb(nil, err)
    end
  end)
end

return M
