-- The real CodeCompanion.nvim (vendored under tests/fixtures/vendor, see its README.md) drives the
-- built `kin acp` through its ACP adapter, configured as editors/acp/README.md tells a person to,
-- against kin's mock model (rules.json next to this file). Run by run.sh, which builds kin and the
-- mock model, puts kin on PATH and sets KIN_BIN, OPENAI_BASE_URL, OPENAI_API_KEY, KIN_MODEL and
-- KIN_HOME:
--   nvim --headless -u NONE -l tests/acp_codecompanion/run.lua
-- Everything is done as a person would: the prompt is typed into CodeCompanion's chat buffer and
-- sent with its send key; the permission is answered with the key CodeCompanion's approval prompt
-- shows for "Accept". Success is what the chat buffer shows; every wait is for a state, never a
-- sleep, and the timeouts are generous (a slow machine only makes the test slower).

local here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p"))
local vendor = vim.fs.dirname(here) .. "/fixtures/vendor"
local KIN = assert(vim.env.KIN_BIN, "KIN_BIN is not set: run tests/acp_codecompanion/run.sh")

local function log_path()
  return vim.fn.stdpath("log") .. "/codecompanion.log"
end

-- fail reports what went wrong with the chat buffer and CodeCompanion's log (which has kin's
-- stderr and every ACP message), then exits non-zero.
local function fail(msg, bufnr)
  io.stderr:write("FAIL: " .. msg .. "\n")
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) then
    io.stderr:write("--- chat buffer\n" .. table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n")
  end
  local f = io.open(log_path(), "r")
  if f then
    local lines = vim.split(f:read("*a"), "\n")
    f:close()
    io.stderr:write("--- codecompanion.log (last 80 lines)\n")
    io.stderr:write(table.concat(vim.list_slice(lines, math.max(1, #lines - 80)), "\n") .. "\n")
  end
  os.exit(1)
end

local function check(cond, msg, bufnr)
  if not cond then
    fail(msg, bufnr)
  end
end

local function wait_for(pred, what, bufnr, timeout)
  local ok = vim.wait(timeout or 60000, pred, 50)
  check(ok, "timed out waiting for " .. what, bufnr)
end

vim.opt.rtp:prepend(vendor .. "/plenary.nvim")
vim.opt.rtp:prepend(vendor .. "/codecompanion.nvim")
vim.cmd("runtime! plugin/codecompanion.lua")

-- The configuration from editors/acp/README.md ("Neovim: CodeCompanion") as it is, with the log at
-- DEBUG so a failure shows the ACP traffic. run.sh puts the built kin first on PATH.
check(
  vim.fn.exepath("kin") == vim.fn.fnamemodify(KIN, ":p"),
  "kin on PATH is " .. vim.fn.exepath("kin") .. ", not the built " .. KIN
)
require("codecompanion").setup({
  adapters = {
    acp = {
      kin = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "kin",
          formatted_name = "kin",
          commands = { default = { "kin", "acp" } },
          defaults = { auth_method = "kin-login" },
          env = {},
        })
      end,
    },
  },
  interactions = { chat = { adapter = "kin" } },
  opts = { log_level = "DEBUG" },
})

local function lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local function text(bufnr)
  return table.concat(lines(bufnr), "\n")
end

local function has(bufnr, s)
  return text(bufnr):find(s, 1, true) ~= nil
end

local function count(bufnr, s)
  local n, from = 0, 1
  local all = text(bufnr)
  while true do
    local i = all:find(s, from, true)
    if not i then
      return n
    end
    n, from = n + 1, i + #s
  end
end

-- focus puts the cursor in the chat's window in Normal mode, where its keys are mapped.
local function focus(chat)
  local win = vim.fn.bufwinid(chat.bufnr)
  check(win ~= -1, "the chat buffer is not shown in a window", chat.bufnr)
  vim.api.nvim_set_current_win(win)
  vim.cmd("stopinsert")
end

-- press types keys as a person would (mappings apply) and runs them now.
local function press(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), "mx", false)
end

-- ask types q at the end of the chat buffer, below its "Me" header, and sends it with the first
-- Normal-mode key CodeCompanion maps to "send".
local function ask(chat, q)
  focus(chat)
  -- Opening the chat starts kin acp and its session in the background; a person sends once the
  -- chat has connected (sending earlier makes CodeCompanion connect again, synchronously).
  wait_for(function()
    return not chat.current_request
      and vim.bo[chat.bufnr].modifiable
      and chat.acp_connection
      and chat.acp_connection:is_connected()
  end, "the chat to connect to kin and take input before " .. q, chat.bufnr, 120000)
  local n = vim.api.nvim_buf_line_count(chat.bufnr)
  vim.api.nvim_buf_set_lines(chat.bufnr, n, n, false, { q })
  vim.api.nvim_win_set_cursor(0, { n + 1, 0 })
  local send = require("codecompanion.config").interactions.chat.keymaps.send.modes.n
  press(type(send) == "table" and send[1] or send)
end

-- turn_over: CodeCompanion has finished the request and put a new "Me" header for the next input.
local function turn_over(chat, headers_before)
  return not chat.current_request and count(chat.bufnr, "## Me") > headers_before
end

local chat = require("codecompanion").chat()
check(chat and chat.bufnr, "CodeCompanion did not open a chat")
local buf = chat.bufnr
check(chat.adapter.name == "kin", "the chat's adapter is " .. tostring(chat.adapter and chat.adapter.name))

-- 1. A prompt goes in; kin's streamed answer (three chunks from the mock model) shows assembled.
local greet = "Hello from kin's mock model: CC-ANSWER-31."
local me = count(buf, "## Me")
ask(chat, "cc-greet-31: say hello")
wait_for(function()
  return turn_over(chat, me)
end, "the first turn to end", buf, 120000)
check(has(buf, greet), "the chat does not show kin's answer " .. vim.inspect(greet), buf)
check(chat.acp_connection and chat.acp_connection.session_id, "CodeCompanion has no ACP session with kin", buf)
local last = chat.messages[#chat.messages]
check(
  last and last.role == "llm" and vim.trim(last.content) == greet,
  "the chat's last message is not kin's answer: " .. vim.inspect(last),
  buf
)

-- 2. kin asks permission for a command; CodeCompanion's approval prompt in the chat is answered
-- with its "Accept" key (allow once); the command runs and kin's answer after it shows.
me = count(buf, "## Me")
ask(chat, "cc-run-42: run the command")
wait_for(function()
  return has(buf, "Approval Required")
end, "CodeCompanion's approval prompt", buf, 120000)
check(has(buf, "cc-ok-$((40+2))"), "the approval prompt does not show the command", buf)
check(not has(buf, "printed cc-ok-42"), "the command's answer came before the approval", buf)
local accept
for _, l in ipairs(lines(buf)) do
  accept = accept or l:match("^%- `([^`]+)` %- Accept$")
end
check(accept, "the approval prompt offers no Accept key", buf)
focus(chat)
press(accept)
wait_for(function()
  return turn_over(chat, me)
end, "the second turn to end", buf, 120000)
check(has(buf, "You selected: Accept"), "CodeCompanion did not record the Accept choice", buf)
check(has(buf, "The command printed cc-ok-42."), "the chat does not show kin's answer after the command ran", buf)
check(not has(buf, "The command did not run."), "the command did not run", buf)

chat:close()
io.stdout:write("ok: CodeCompanion streamed kin's answer, asked its permission, and showed the answer after the command\n")
os.exit(0)
