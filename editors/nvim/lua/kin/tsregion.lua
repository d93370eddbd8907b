-- The transcript's markdown highlighting (tree-sitter), bounded to what its windows show.
--
-- Neovim's tree-sitter parses the whole buffer after each change and runs the markdown injection
-- query over all of it (every paragraph is a markdown_inline region, every code block one more):
-- each streamed piece then cost time in proportion to the session's length (60-110 ms per redraw
-- at 18,000 lines, so a long session stuttered at every piece). A long transcript's parser is
-- given one included region instead: from a place kin wrote (a turn's "## You", a call's or a
-- block's first line, so never inside the model's code block) above the lines shown, to a
-- little below them, or to the end when the end is shown. It moves with the windows, at the
-- start of each redraw, before the highlighter parses. Lines outside it are drawn unhighlighted
-- until a window shows them.
--
-- LanguageTree:set_included_regions is how Neovim itself confines an injected language to its
-- regions; it is not in the documented API. Only Neovim 0.10 gets the bounded region: 0.11 and
-- later parse for the highlighter in the background, in slices, and a region made 0.12's parse
-- slower, not faster (measured: 470 ms against 280 ms a redraw with its parsing forced to run
-- at once, at 18,000 lines). Elsewhere the transcript is highlighted whole, as before.
local T = require("kin.transcript")

local M = {}

--- Up to this many lines a transcript is parsed whole.
M.WHOLE = 2000
--- Lines parsed above and below the ones shown (a small scroll needs no new parse).
M.MARGIN = 100

--- The region to parse: its first row and its last (nil: to the end), or nil when the
--- transcript is short or no window shows it.
function M.region(buf)
  local n = vim.api.nvim_buf_line_count(buf)
  if n <= M.WHOLE then
    return nil
  end
  local top, bot
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local w0, w1 = vim.fn.line("w0", win) - 1, vim.fn.line("w$", win) - 1
    top = math.min(top or w0, w0)
    bot = math.max(bot or w1, w1)
  end
  if not top then
    return nil
  end
  -- Start where kin wrote a heading or a block: the last such row at or above the margin.
  local from, start = math.max(0, top - M.MARGIN), 0
  for _, ns in ipairs({ T.ns, T.turn_ns }) do
    local m = vim.api.nvim_buf_get_extmarks(buf, ns, { from, 0 }, 0, { limit = 1 })[1]
    if m and m[2] > start then
      start = m[2]
    end
  end
  -- End a margin below the last line shown, rounded up so that scrolling within it keeps the
  -- region; at the end when that is near.
  local last = (math.floor((bot + M.MARGIN) / M.MARGIN) + 1) * M.MARGIN
  if last >= n - 1 then
    return start, nil
  end
  return start, last
end

M.enabled = vim.fn.has("nvim-0.11") == 0

--- Moves the parser's region of buf to what its windows show, when it has moved.
function M.update(buf)
  if not M.enabled then
    return
  end
  local hl = vim.treesitter.highlighter.active[buf]
  local parser = hl and hl.tree
  if not (parser and type(parser.set_included_regions) == "function" and type(parser.included_regions) == "function") then
    return
  end
  local regions = parser:included_regions()
  local cur = #regions == 1 and regions[1][1] or nil -- Range6 of the one region, if bounded
  local start, last = M.region(buf)
  if not start then
    if not cur or vim.api.nvim_buf_line_count(buf) > M.WHOLE then
      return -- never bounded, or no window: as it is
    end
    start = 0 -- bounded once, now short (cleared for a resume): the whole of it
  end
  -- To the end: to the start of the row after the last; text added there moves the region's
  -- end with it (tree-sitter's edit of a range that ends where the edit starts). Its "end of
  -- all text" (2^32 - 1) made Neovim 0.12 take seconds at each parse.
  local end_row = last and last + 1 or vim.api.nvim_buf_line_count(buf)
  if cur and cur[1] == start and cur[2] == 0 and cur[4] == end_row then
    return
  end
  local at = vim.api.nvim_buf_get_offset
  parser:set_included_regions({ { { start, 0, at(buf, start), end_row, 0, at(buf, end_row) } } })
end

local provider = vim.api.nvim_create_namespace("kin_transcript_tsregion")
vim.api.nvim_set_decoration_provider(provider, {
  -- At the start of a redraw, before any window's highlighter parses.
  on_start = function()
    for buf in pairs(T.by_buf) do
      if vim.treesitter.highlighter.active[buf] then
        if not pcall(M.update, buf) then
          -- The internal API works otherwise than it did: left as it is from now on.
          M.update = function() end
        end
      end
    end
    return false
  end,
})

return M
