-- A read-only floating window for previews and reports.
local M = {}

---@param lines string[]
---@param opts {title?: string, filetype?: string, enter?: boolean}?
---@return {buf: integer, win: integer, close: fun()}
function M.open(lines, opts)
  opts = opts or {}
  -- A report's line may carry text with line breaks (a server's error message in mcp/check's
  -- explanation); a buffer line cannot hold one, so each becomes lines of its own.
  local split = {}
  for _, l in ipairs(lines) do
    vim.list_extend(split, vim.split(l, "\n", { plain = true }))
  end
  lines = split
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  if opts.filetype then
    vim.bo[buf].filetype = opts.filetype
  end
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, math.max(20, vim.o.columns - 6))
  local height = math.min(math.max(#lines, 1), math.max(3, vim.o.lines - 8))
  local win = vim.api.nvim_open_win(buf, opts.enter or false, {
    relative = "editor",
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 4),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = opts.title and (" " .. opts.title .. " ") or nil,
    title_pos = opts.title and "center" or nil,
    zindex = 60,
  })
  vim.wo[win].wrap = true
  local handle = { buf = buf, win = win }
  function handle.close()
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  if opts.enter then
    vim.keymap.set("n", "q", handle.close, { buffer = buf, nowait = true })
    vim.keymap.set("n", "<Esc>", handle.close, { buffer = buf, nowait = true })
  end
  return handle
end

return M
