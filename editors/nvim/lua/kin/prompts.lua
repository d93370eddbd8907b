-- The questions waiting for the person (approvals, elicitations), oldest first, shown one at a
-- time in kin's own window (kin.panel). Nothing here waits on a callback: a question leaves the
-- queue only when it is answered or kin resolves it, so a picker that never calls back cannot
-- hold up the ones behind it, and the service stopping empties the queue (a restarted kin sends
-- what it still asks again, or session/resume lists it as `pending`).
local panel = require("kin.panel")

local function notify(msg, level)
  require("kin.service").notify(msg, level)
end

local M = {}

---@class kin.Question
---@field id string                  the requestId
---@field revision integer?          kin sends a question again, the same id with the next
---                                  revision, when what it shows changed: it replaces the one
---                                  shown, in place
---@field view fun(item: kin.Question): kin.PanelView
---@field title string               for the notification that announces it
---@field state table                the question's own state (a form being answered, ...)

---@class kin.PromptState
---@field items kin.Question[]
---@field index integer               which one is shown
---@field resolved table<string, boolean>  resolved or answered: never shown again, no late answer
---@field hidden boolean              the person hid the panel
M.state = { items = {}, index = 1, resolved = {}, hidden = false }

--- Called with the number of open questions whenever it changes (the chat's status line).
M.on_change = function(_) end

function M.reset()
  M.state = { items = {}, index = 1, resolved = {}, hidden = false }
  panel.close()
end

function M.items()
  return M.state.items
end

--- The question shown now, if any.
function M.current()
  local st = M.state
  return st.items[st.index]
end

local function find(id)
  for i, item in ipairs(M.state.items) do
    if item.id == id then
      return i, item
    end
  end
end

--- Draws the current question (or closes the panel when none is left).
function M.refresh()
  local st = M.state
  if #st.items == 0 then
    st.index = 1
    panel.close()
    M.on_change(0)
    return
  end
  if st.index > #st.items then
    st.index = #st.items
  elseif st.index < 1 then
    st.index = 1
  end
  M.on_change(#st.items)
  if st.hidden then
    return
  end
  local item = st.items[st.index]
  local ok, view = pcall(item.view, item)
  if not ok then
    notify("kin.nvim: cannot show " .. item.id .. ": " .. tostring(view), vim.log.levels.ERROR)
    return
  end
  view.id = item.id
  view.counter = #st.items > 1 and ("%d of %d"):format(st.index, #st.items) or nil
  panel.render(view)
end

--- Queues a question and shows it without taking the focus; a notification says how to answer.
--- A second push of the same id replaces it in place when it is a newer revision (the panel
--- keeps its scroll position), and is ignored otherwise.
---@param item kin.Question
function M.push(item)
  local st = M.state
  local i, had = find(item.id)
  if had then
    if (item.revision or 0) > (had.revision or 0) then
      local shown = M.current() == had
      item.state = had.state or {}
      st.items[i] = item
      M.refresh()
      -- The card the person is deciding on changed under their keys (the file changed: the
      -- new diff is made on the new text, and may undo what was just typed there). A key typed
      -- ahead, or pressed as the new card came, would answer a card they never saw, and the
      -- answer names the new revision, so kin takes it. The keys go back, as when the card is
      -- resolved; :KinAnswer shows the new one.
      if shown and panel.has_focus() then
        panel.give_back()
        notify(("kin updated the question (:KinAnswer shows it): %s"):format(item.title or item.id), vim.log.levels.WARN)
      end
    end
    return
  end
  st.resolved[item.id] = nil
  item.state = item.state or {}
  table.insert(st.items, item)
  st.hidden = false
  if #st.items == 1 then
    st.index = 1
  end
  M.refresh()
  if not panel.has_focus() then
    notify(("kin asks (:KinAnswer): %s"):format(item.title or item.id), vim.log.levels.INFO)
  end
end

--- Takes a question out of the queue: it was answered here, or kin resolved it.
function M.remove(id)
  local st = M.state
  st.resolved[id] = true
  local i = find(id)
  if not i then
    return
  end
  local shown = M.current() == st.items[i]
  table.remove(st.items, i)
  if i < st.index then
    st.index = st.index - 1
  end
  M.refresh()
  -- The question the person was answering is gone (answered, or resolved by kin): the next one
  -- is shown in the same window, so a key typed ahead, or pressed as kin resolved it, would
  -- answer a question the person never saw. The keys go back where the person came from; the
  -- next question waits for :KinAnswer, as a new one does.
  if shown then
    panel.give_back()
  end
end

--- Sends the person's answer (approval/respond, elicitation/respond) once: a question kin
--- resolved already gets none. It leaves the queue at once; an answer kin refuses with -32602
--- leaves the question open on kin's side, so it is asked again (ask_again(err): err.data may
--- say what to ask again, see elicitation/respond).
function M.answer(id, method, params, ask_again)
  if M.is_resolved(id) then
    return
  end
  M.remove(id)
  require("kin.service").request(method, params, nil, function(err)
    if err.code == -32013 then
      return -- kin resolved it meanwhile
    end
    notify(method .. " failed: " .. tostring(err.message), vim.log.levels.ERROR)
    if err.code == -32602 then
      ask_again(err)
    end
  end)
end

--- kin resolved a request (any reason): it is gone, and no late answer is sent.
M.resolve = M.remove

function M.is_resolved(id)
  return M.state.resolved[id] == true
end

--- Re-draws a question after its own state changed (a failed open, a form being answered).
function M.update(id)
  local cur = M.current()
  if cur and cur.id == id then
    M.refresh()
  end
end

--- Shows the next (1) or previous (-1) open question.
function M.cycle(dir)
  local st = M.state
  if #st.items == 0 then
    return
  end
  st.index = ((st.index - 1 + dir) % #st.items) + 1
  M.refresh()
end

--- :KinAnswer — shows the panel again if it was hidden and moves the cursor into it.
function M.focus()
  local st = M.state
  if #st.items == 0 then
    notify("kin is not asking anything", vim.log.levels.INFO)
    return false
  end
  st.hidden = false
  M.refresh() -- (re)opens it in this tab page
  return panel.focus()
end

--- The service stopped: nothing queued can be answered any more.
function M.clear()
  for _, item in ipairs(M.state.items) do
    M.state.resolved[item.id] = true
  end
  M.state.items = {}
  M.state.index = 1
  M.refresh()
end

panel.on_hide = function()
  M.state.hidden = true
  if #M.state.items > 0 then
    notify(("kin: %d question(s) still open; :KinAnswer shows them"):format(#M.state.items),
      vim.log.levels.INFO)
  end
end
panel.on_cycle = M.cycle

return M
