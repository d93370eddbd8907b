-- kin's own window for what the person must decide (approvals, questions from MCP servers and
-- from kin). Two windows that never take the focus when they appear: the body (the full diff,
-- command or question: scrollable, highlighted, measured with its buffer's own tabstop) and,
-- below it, the choices, each with a fixed key. Only a key pressed in these windows answers, so
-- text typed elsewhere can never become an answer. It shows one view at a time; the queue in
-- kin.prompts decides which.
local config = require("kin.config")

local M = {}

local ns = vim.api.nvim_create_namespace("kin_panel")
M.ns = ns

-- Highlight groups (linked by default, so colour schemes decide the colours).
local links = {
  KinTitle = "Title",
  KinDiffAdd = "DiffAdd",
  KinDiffDelete = "DiffDelete",
  KinDiffHunk = "DiffChange",
  KinDiffFile = "Title",
  KinWarning = "WarningMsg",
  KinMeta = "Comment",
  KinCommand = "Statement",
  KinKey = "Special",
  KinDeny = "ErrorMsg",
}
for group, target in pairs(links) do
  vim.api.nvim_set_hl(0, group, { link = target, default = true })
end

--- A view's body being built: its lines and their whole-line highlights (marks); add(text, hl)
--- adds text (several lines when it has newlines), diff(text) a unified diff, each line
--- highlighted by what it is.
function M.body()
  local b = { lines = {}, marks = {} }
  function b.add(text, hl)
    for _, l in ipairs(vim.split(text or "", "\n", { plain = true })) do
      b.lines[#b.lines + 1] = l
      if hl then
        b.marks[#b.marks + 1] = { row = #b.lines - 1, hl = hl }
      end
    end
  end
  -- A unified diff, each line highlighted by what it is.
  function b.diff(text)
    for _, l in ipairs(vim.split(text, "\n", { plain = true })) do
      local hl
      if l:match("^%-%-%- ") or l:match("^%+%+%+ ") then
        hl = "KinDiffFile"
      elseif l:match("^@@") then
        hl = "KinDiffHunk"
      elseif l:sub(1, 1) == "+" then
        hl = "KinDiffAdd"
      elseif l:sub(1, 1) == "-" then
        hl = "KinDiffDelete"
      end
      b.add(l, hl)
    end
  end
  return b
end

---@class kin.PanelChoice
---@field key string          the key that picks it (fixed per option kind, see kin.approval.keys)
---@field label string        the option's name as kin sent it
---@field deny boolean?       the refusal: also what <Esc> picks, and where the cursor starts
---@field pick fun()          what choosing it does

---@class kin.PanelView
---@field id string
---@field title string
---@field counter string?     "1 of 3"
---@field lines string[]      the body
---@field filetype string?
---@field tabstop integer?
---@field marks {row: integer, hl: string}[]?  whole-line highlights of the body (0-based rows)
---@field choices kin.PanelChoice[]
---@field extra_keys table<string, {desc: string, fn: fun()}>?  more keys (copy the address, ...)

---@class kin.PanelState
---@field view kin.PanelView?
---@field body_buf integer?
---@field choices_buf integer?
---@field body_win integer?
---@field choices_win integer?
---@field mapped table<string, boolean>  keys mapped for the current view's choices
---@field came_from integer?              the window to go back to once nothing is left to decide
---@field closing boolean                 we are closing the windows ourselves
---@field layout table?                   the window heights before the split opened
M.state = { mapped = {} }

--- Called when the person hides the panel (q, :close); set by kin.prompts.
M.on_hide = function() end
--- Called by <Tab> / <S-Tab>; set by kin.prompts.
M.on_cycle = function(_) end

local function valid_win(w)
  return w ~= nil and vim.api.nvim_win_is_valid(w)
end

local function valid_buf(b)
  return b ~= nil and vim.api.nvim_buf_is_valid(b)
end

function M.is_open()
  return valid_win(M.state.body_win) and valid_win(M.state.choices_win)
end

--- The windows and buffers (tests read them).
function M.windows()
  local st = M.state
  return { body = st.body_win, choices = st.choices_win, body_buf = st.body_buf, choices_buf = st.choices_buf }
end

local function scratch(name)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  return buf
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

-- Runs a Normal-mode command in the body window (scrolling from the choices window).
local function in_body(keys)
  local win = M.state.body_win
  if valid_win(win) then
    vim.api.nvim_win_call(win, function()
      vim.cmd("normal! " .. vim.api.nvim_replace_termcodes(keys, true, false, true))
    end)
  end
end

-- The next (dir 1) or previous (dir -1) hunk or file header of a diff, from the cursor.
local function jump_hunk(dir)
  local win, buf = M.state.body_win, M.state.body_buf
  if not (valid_win(win) and valid_buf(buf)) then
    return
  end
  local row = vim.api.nvim_win_get_cursor(win)[1]
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local i = row + dir
  while i >= 1 and i <= #lines do
    if lines[i]:match("^@@") then
      vim.api.nvim_win_set_cursor(win, { i, 0 })
      vim.api.nvim_win_call(win, function()
        vim.cmd("normal! zt")
      end)
      return
    end
    i = i + dir
  end
end

local function choose(choice)
  if choice then
    choice.pick()
  end
end

local function choice_under_cursor()
  local view, win = M.state.view, M.state.choices_win
  if not (view and valid_win(win)) then
    return nil
  end
  return view.choices[vim.api.nvim_win_get_cursor(win)[1]]
end

local function deny_choice()
  local view = M.state.view
  for _, c in ipairs(view and view.choices or {}) do
    if c.deny then
      return c
    end
  end
end

-- Keys that are the same on every view, mapped once per buffer.
local function map_common(buf, is_choices)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "kin: " .. desc })
  end
  map("<Esc>", function()
    choose(deny_choice())
  end, "refuse (the same as the Deny choice)")
  map("q", function()
    M.hide(true)
  end, "hide; the question stays open (:KinAnswer shows it again)")
  map("<Tab>", function()
    M.on_cycle(1)
  end, "the next open question")
  map("<S-Tab>", function()
    M.on_cycle(-1)
  end, "the previous open question")
  map("]c", function()
    jump_hunk(1)
  end, "next hunk of the diff")
  map("[c", function()
    jump_hunk(-1)
  end, "previous hunk of the diff")
  if is_choices then
    map("<CR>", function()
      choose(choice_under_cursor())
    end, "choose the line under the cursor")
    for _, k in ipairs({ "<C-d>", "<C-u>", "<C-f>", "<C-b>", "<C-e>", "<C-y>", "G", "gg" }) do
      map(k, function()
        in_body(k)
      end, "scroll the body")
    end
  end
end

local function buffers()
  local st = M.state
  if not valid_buf(st.body_buf) then
    st.body_buf = scratch("kin://question")
    map_common(st.body_buf, false)
  end
  if not valid_buf(st.choices_buf) then
    st.choices_buf = scratch("kin://question/choices")
    map_common(st.choices_buf, true)
    st.mapped = {}
  end
  return st.body_buf, st.choices_buf
end

-- Maps each choice's key in both buffers, removing the keys of the view before.
local function map_choices(view)
  local st = M.state
  local want = {}
  for _, c in ipairs(view.choices) do
    want[c.key] = c
  end
  for key, e in pairs(view.extra_keys or {}) do
    want[key] = want[key] or { extra = e }
  end
  for _, buf in ipairs({ st.body_buf, st.choices_buf }) do
    for key in pairs(st.mapped) do
      if not want[key] then
        pcall(vim.keymap.del, "n", key, { buffer = buf })
      end
    end
    for key, c in pairs(want) do
      local fn = c.extra and c.extra.fn or function()
        -- Look the choice up at press time: the view may have been re-rendered since.
        for _, cur in ipairs(M.state.view and M.state.view.choices or {}) do
          if cur.key == key then
            return cur.pick()
          end
        end
      end
      vim.keymap.set("n", key, fn, {
        buffer = buf,
        nowait = true,
        silent = true,
        desc = "kin: " .. (c.extra and c.extra.desc or c.label),
      })
    end
  end
  st.mapped = {}
  for key in pairs(want) do
    st.mapped[key] = true
  end
end

local function winbar(view)
  local title = (view.title or ""):gsub("%%", "%%%%"):gsub("\n", " ")
  local counter = view.counter and (" (" .. view.counter .. ")") or ""
  return ("%%#KinTitle# kin asks%s:%%* %s%%=%%l/%%L lines %%P "):format(counter, title)
end

local function statusline(view)
  local extra = {}
  for key, e in pairs(view.extra_keys or {}) do
    extra[#extra + 1] = key .. " " .. e.desc
  end
  table.sort(extra)
  local s = " <C-d>/<C-u> scroll  ]c/[c hunks  <Tab> next question  q hide  <Esc> deny"
  if #extra > 0 then
    s = s .. "  " .. table.concat(extra, "  ")
  end
  return (s:gsub("%%", "%%%%"))
end

local function set_win_opts(win, is_body)
  local wo = vim.wo[win]
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldenable = false
  wo.spell = false
  wo.list = false
  wo.winfixheight = true
  wo.cursorline = true
  wo.wrap = true
  wo.linebreak = false
  wo.breakindent = is_body
  wo.scrolloff = 0
end

-- How many screen rows the body takes in its window (tabs, wrapping and all).
local function body_rows(win)
  local ok, h = pcall(vim.api.nvim_win_text_height, win, {})
  return ok and h.all or vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win))
end

local function opts()
  return config.options.approval or {}
end

-- The biggest body the editor has room for.
local function max_body_rows(nchoices)
  local frac = opts().height or 0.5
  local room = vim.o.lines - vim.o.cmdheight - nchoices - 4
  return math.max(3, math.min(math.floor(vim.o.lines * frac), room))
end

local function track_close(win)
  vim.api.nvim_create_autocmd("WinClosed", {
    group = vim.api.nvim_create_augroup("kin_panel_" .. win, { clear = true }),
    pattern = tostring(win),
    once = true,
    callback = function()
      if not M.state.closing then
        vim.schedule(function()
          M.hide(true)
        end)
      end
    end,
  })
end

-- The heights of the tab page's windows (floats aside) before the split opens, so that closing
-- it gives every window its rows back: left to Neovim, they go to whichever window is next to
-- it (the chat's input box, after a few approvals, took most of the transcript's rows).
local function remember_layout()
  local layout = { tab = vim.api.nvim_get_current_tabpage(), heights = {}, order = {} }
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(layout.tab)) do
    if vim.api.nvim_win_get_config(w).relative == "" then
      layout.heights[w] = vim.api.nvim_win_get_height(w)
      layout.order[#layout.order + 1] = w
    end
  end
  return layout
end

-- Gives the windows their heights back once the split is closed: all of them when the layout is
-- the one the split was opened in, else only those that keep a fixed height ('winfixheight').
local function restore_layout(layout)
  if not (layout and vim.api.nvim_tabpage_is_valid(layout.tab)) then
    return
  end
  local now = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(layout.tab)) do
    if vim.api.nvim_win_get_config(w).relative == "" then
      now[#now + 1] = w
    end
  end
  local same = vim.deep_equal(now, layout.order)
  -- Twice: a height set later may move rows of one set before.
  for _ = 1, 2 do
    for _, w in ipairs(layout.order) do
      if vim.api.nvim_win_is_valid(w) and (same or vim.wo[w].winfixheight) then
        pcall(vim.api.nvim_win_set_height, w, layout.heights[w])
      end
    end
  end
end

local function open_split(body, choices, nchoices)
  local st = M.state
  st.layout = remember_layout()
  local pos = opts().position or "bottom"
  local base = { split = pos == "top" and "above" or "below", win = -1, height = 3 }
  st.body_win = vim.api.nvim_open_win(body, false, base)
  st.choices_win = vim.api.nvim_open_win(choices, false, { split = "below", win = st.body_win, height = nchoices })
end

local function float_geometry(nchoices, rows)
  local width = math.max(40, math.min(vim.o.columns - 4, math.floor(vim.o.columns * (opts().width or 0.8))))
  local height = rows
  local total = height + nchoices + 4 -- two borders each
  local row = math.max(0, math.floor((vim.o.lines - vim.o.cmdheight - total) / 2))
  local col = math.floor((vim.o.columns - width - 2) / 2)
  return {
    body = { relative = "editor", row = row, col = col, width = width, height = height, border = "rounded", zindex = 40 },
    choices = {
      relative = "editor",
      row = row + height + 2,
      col = col,
      width = width,
      height = nchoices,
      border = "rounded",
      zindex = 40,
    },
  }
end

local function open_float(body, choices, nchoices)
  local st = M.state
  local g = float_geometry(nchoices, 3)
  st.body_win = vim.api.nvim_open_win(body, false, g.body)
  st.choices_win = vim.api.nvim_open_win(choices, false, g.choices)
end

-- Sizes the body to its text, up to what fits; the choices always fit whole. The body's height
-- counts its winbar too, one row more than its text.
local function fit(nchoices)
  local st = M.state
  local rows = math.min(body_rows(st.body_win) + 1, max_body_rows(nchoices))
  rows = math.max(rows, 3)
  if vim.api.nvim_win_get_config(st.body_win).relative ~= "" then
    local g = float_geometry(nchoices, rows)
    vim.api.nvim_win_set_config(st.body_win, g.body)
    vim.api.nvim_win_set_config(st.choices_win, g.choices)
    -- Wrapping depends on the final width: measure once more.
    rows = math.max(3, math.min(body_rows(st.body_win) + 1, max_body_rows(nchoices)))
    g = float_geometry(nchoices, rows)
    vim.api.nvim_win_set_config(st.body_win, g.body)
    vim.api.nvim_win_set_config(st.choices_win, g.choices)
  else
    vim.api.nvim_win_set_height(st.choices_win, nchoices)
    vim.api.nvim_win_set_height(st.body_win, rows)
  end
end

local function choice_lines(view)
  local lines = {}
  for _, c in ipairs(view.choices) do
    lines[#lines + 1] = ("  %s  %s"):format(c.key, c.label)
  end
  return lines
end

--- Shows a view without taking the focus (the person's cursor, mode and typing stay where they
--- are). Re-rendering the same view keeps the body's scroll position.
---@param view kin.PanelView
function M.render(view)
  local st = M.state
  local same = st.view and st.view.id == view.id
  st.view = view
  local body, choices = buffers()
  local keep
  if same and valid_win(st.body_win) then
    keep = vim.api.nvim_win_call(st.body_win, vim.fn.winsaveview)
  end
  set_lines(body, view.lines)
  if view.filetype and vim.bo[body].filetype ~= view.filetype then
    vim.bo[body].filetype = view.filetype
  end
  vim.bo[body].tabstop = view.tabstop or vim.go.tabstop
  vim.api.nvim_buf_clear_namespace(body, ns, 0, -1)
  for _, m in ipairs(view.marks or {}) do
    pcall(vim.api.nvim_buf_set_extmark, body, ns, m.row, 0, { line_hl_group = m.hl })
  end
  local clines = choice_lines(view)
  set_lines(choices, clines)
  vim.api.nvim_buf_clear_namespace(choices, ns, 0, -1)
  for i, c in ipairs(view.choices) do
    pcall(vim.api.nvim_buf_set_extmark, choices, ns, i - 1, 2, { end_col = 2 + #c.key, hl_group = "KinKey" })
    if c.deny then
      pcall(vim.api.nvim_buf_set_extmark, choices, ns, i - 1, 5 + #c.key - 1, { end_row = i, end_col = 0, hl_group = "KinDeny", strict = false })
    end
  end
  map_choices(view)

  local nchoices = math.max(1, #clines)
  -- Shown where the person is: windows left in another tab page are opened again here.
  if M.is_open() and vim.api.nvim_win_get_tabpage(st.body_win) ~= vim.api.nvim_get_current_tabpage() then
    M.close_windows()
  end
  if not M.is_open() then
    M.close_windows()
    if (opts().position or "bottom") == "float" then
      open_float(body, choices, nchoices)
    else
      open_split(body, choices, nchoices)
    end
    set_win_opts(st.body_win, true)
    set_win_opts(st.choices_win, false)
    track_close(st.body_win)
    track_close(st.choices_win)
  end
  vim.wo[st.body_win].winbar = winbar(view)
  vim.wo[st.choices_win].statusline = statusline(view)
  fit(nchoices)
  if keep then
    vim.api.nvim_win_call(st.body_win, function()
      vim.fn.winrestview(keep)
    end)
  else
    vim.api.nvim_win_set_cursor(st.body_win, { 1, 0 })
    vim.api.nvim_win_call(st.body_win, function()
      vim.cmd("normal! zt")
    end)
  end
  -- The cursor of the choices starts on the refusal.
  local deny_row = #clines
  for i, c in ipairs(view.choices) do
    if c.deny then
      deny_row = i
    end
  end
  if not same then
    pcall(vim.api.nvim_win_set_cursor, st.choices_win, { math.max(1, deny_row), 0 })
  end
end

--- Closes the windows (the buffers stay for the next view).
function M.close_windows()
  local st = M.state
  st.closing = true
  local cur = vim.api.nvim_get_current_win()
  local was_inside = cur == st.body_win or cur == st.choices_win
  for _, w in ipairs({ st.choices_win, st.body_win }) do
    if valid_win(w) then
      if #vim.api.nvim_list_wins() > 1 then
        pcall(vim.api.nvim_win_close, w, true)
      end
    end
  end
  st.closing = false
  st.body_win, st.choices_win = nil, nil
  local layout = st.layout
  st.layout = nil
  restore_layout(layout)
  if was_inside and valid_win(st.came_from) then
    pcall(vim.api.nvim_set_current_win, st.came_from)
  end
end

--- Nothing left to show.
function M.close()
  M.close_windows()
  M.state.view = nil
end

--- Hides the panel; the questions stay open. by_person: the person hid it (q, :close).
function M.hide(by_person)
  M.close_windows()
  if by_person then
    M.on_hide()
  end
end

--- Moves the cursor into the choices (the only explicit way in besides window commands).
function M.focus()
  local st = M.state
  if not M.is_open() then
    return false
  end
  local cur = vim.api.nvim_get_current_win()
  if cur ~= st.body_win and cur ~= st.choices_win then
    st.came_from = cur
  end
  vim.api.nvim_set_current_win(st.choices_win)
  return true
end

--- Moves the cursor out of the panel, back where the person came from (when it is in it).
function M.give_back()
  local st = M.state
  if not M.has_focus() then
    return
  end
  if valid_win(st.came_from) then
    pcall(vim.api.nvim_set_current_win, st.came_from)
    return
  end
  -- The window it came from is gone: any other ordinary window of this tab page.
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if w ~= st.body_win and w ~= st.choices_win and vim.api.nvim_win_get_config(w).relative == "" then
      pcall(vim.api.nvim_set_current_win, w)
      return
    end
  end
end

--- Whether the cursor is in the panel.
function M.has_focus()
  local cur = vim.api.nvim_get_current_win()
  return cur == M.state.body_win or cur == M.state.choices_win
end

-- Remember where the person came from, however they got in (<C-w>j, a mouse click).
vim.api.nvim_create_autocmd("WinLeave", {
  group = vim.api.nvim_create_augroup("kin_panel", { clear = true }),
  callback = function()
    local cur = vim.api.nvim_get_current_win()
    local st = M.state
    if cur ~= st.body_win and cur ~= st.choices_win and vim.api.nvim_win_get_config(cur).relative == "" then
      st.came_from = cur
    end
  end,
})

return M
