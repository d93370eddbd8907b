-- One question to the person at a time: approval and elicitation requests wait in a queue, since
-- vim.ui.select / vim.ui.input dialogs do not stack. A request that kin resolves while it waits
-- (turn cancelled, granted by an existing grant) is dropped; one resolved while shown is marked
-- so no late answer is sent.
local M = {}

---@class kin.PromptState
---@field queue {id: string, show: fun(done: fun())}[]
---@field active string?                 the request being shown
---@field resolved table<string, boolean>
---@field on_resolved table<string, function> cleanup of the shown request (close a preview)
M.state = { queue = {}, resolved = {}, on_resolved = {} }

function M.reset()
  M.state = { queue = {}, resolved = {}, on_resolved = {} }
end

local function next_prompt()
  local st = M.state
  if st.active or #st.queue == 0 then
    return
  end
  local item = table.remove(st.queue, 1)
  if st.resolved[item.id] then
    return next_prompt()
  end
  st.active = item.id
  local finished = false
  local ok, err = pcall(item.show, function()
    if finished then
      return
    end
    finished = true
    st.on_resolved[item.id] = nil
    if st.active == item.id then
      st.active = nil
    end
    vim.schedule(next_prompt)
  end)
  if not ok then
    st.active = nil
    vim.notify("kin.nvim: " .. tostring(err), vim.log.levels.ERROR, { title = "kin" })
    vim.schedule(next_prompt)
  end
end

--- Queues a question; show(done) must call done() once the person answered or dismissed it.
function M.push(id, show)
  for _, item in ipairs(M.state.queue) do
    if item.id == id then
      return
    end
  end
  if M.state.active == id then
    return
  end
  M.state.resolved[id] = nil
  table.insert(M.state.queue, { id = id, show = show })
  next_prompt()
end

--- Registers cleanup for the request being shown, run if kin resolves it first.
function M.on_resolved(id, fn)
  M.state.on_resolved[id] = fn
end

--- kin resolved a request (any reason): drop it from the queue, clean up if it is shown.
function M.resolve(id)
  local st = M.state
  st.resolved[id] = true
  for i, item in ipairs(st.queue) do
    if item.id == id then
      table.remove(st.queue, i)
      break
    end
  end
  local fn = st.on_resolved[id]
  st.on_resolved[id] = nil
  if fn then
    pcall(fn)
  end
end

function M.is_resolved(id)
  return M.state.resolved[id] == true
end

--- The service stopped: nothing queued can be answered any more.
function M.clear()
  for _, item in ipairs(M.state.queue) do
    M.state.resolved[item.id] = true
  end
  M.state.queue = {}
  for id, fn in pairs(M.state.on_resolved) do
    M.state.resolved[id] = true
    pcall(fn)
  end
  M.state.on_resolved = {}
end

return M
