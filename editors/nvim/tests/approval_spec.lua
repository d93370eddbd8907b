-- Approvals in kin's own window (kin.panel), against an in-process fake kin. The behaviour with
-- the real kin (a long diff, typing while an approval arrives, pickers) is in
-- review_spec.lua, integration_spec.lua and typing_spec.lua.
local t = require("harness")
local fake_kin = require("fake_kin")

local function setup(opts)
  local fake = fake_kin.new()
  require("kin").setup(vim.tbl_extend("force", { spawn = fake.spawn, log_file = false }, opts or {}))
  fake_kin.wait_ready()
  return fake
end

local OPTIONS = {
  { optionId = "allow_once", name = "Allow once", kind = "allow_once" },
  { optionId = "allow_always", name = "Always allow `go test` commands in this session", kind = "allow_always" },
  { optionId = "allow_always_permanent", name = "Always allow `go test` commands in every session", kind = "allow_always" },
  { optionId = "deny", name = "Deny", kind = "reject_once" },
}

local function bash_request(id)
  return {
    requestId = id or "ap_3", sessionId = "s_1", turnId = "t_2", callId = "call_7", kind = "tool_call",
    tool = "bash", toolKind = "execute", title = "Run go test ./...", command = "go test ./...", cwd = "/home/ana/src/app",
    sandbox = { confined = true, network = false, writable = { "/home/ana/src/app" } },
    grant = { key = "bash:go test", label = "Always allow `go test` commands" },
    options = OPTIONS,
  }
end

local function responses(fake)
  return fake:sent_params("approval/respond")
end

local function one_response(fake)
  t.wait_for(function()
    return #responses(fake) == 1
  end, "approval/respond")
  return responses(fake)[1]
end

-- Every kind of question kin asks, as kin sends it.
local KINDS = {
  bash = bash_request("k_bash"),
  edit = {
    requestId = "k_edit", sessionId = "s_1", kind = "tool_call", tool = "edit_file", toolKind = "edit", title = "Edit main.go",
    diffs = { { path = "/a/main.go", unified = "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-func main() {}\n+func main() { run() }\n" } },
    options = OPTIONS,
  },
  mcp = {
    requestId = "k_mcp", sessionId = "s_1", kind = "tool_call", tool = "mcp__docs__query-docs", serverTool = "query-docs",
    title = "Call query-docs on docs", server = "docs", destination = "https://mcp.example.com/mcp",
    arguments = '{"query":"react hooks"}', options = OPTIONS,
  },
  server_launch = {
    requestId = "k_launch", kind = "server_launch", server = "files", title = "Start MCP server files", transport = "stdio",
    destination = "npx -y @modelcontextprotocol/server-filesystem /data", scope = "project", arguments = "env TOKEN=●●●●",
    options = {
      { optionId = "allow_once", name = "Allow once", kind = "allow_once" },
      { optionId = "trust", name = "Trust server", kind = "allow_always" },
      { optionId = "deny", name = "Deny", kind = "reject_once" },
    },
  },
  acknowledge_unknown = {
    requestId = "k_ack", sessionId = "s_1", kind = "acknowledge_unknown", tool = "bash", title = "bash may already have run",
    options = {
      { optionId = "allow_once", name = "Acknowledge and continue", kind = "allow_once" },
      { optionId = "deny", name = "Not now", kind = "reject_once" },
    },
  },
  continue = {
    requestId = "k_cont", sessionId = "s_1", kind = "continue", title = "kin has made 16 tool calls in this turn. Continue for 16 more?",
    options = {
      { optionId = "allow_once", name = "Continue for 16 more", kind = "allow_once" },
      { optionId = "deny", name = "Stop the turn", kind = "reject_once" },
    },
  },
}

describe("approvals", function()
  it("appear in kin's window without taking the focus, and only a key there answers", function()
    local fake = setup()
    vim.cmd("enew")
    local mine = vim.api.nvim_get_current_win()
    fake:notify("approval/request", bash_request())
    t.wait_panel("go test ./...")
    t.eq(mine, vim.api.nvim_get_current_win(), "the focus stays where the person works")
    local body = t.panel_body()
    t.contains(body, "# cwd: /home/ana/src/app")
    t.contains(body, "# sandbox: confined by kin's sandbox, no network; it may change only /home/ana/src/app")
    t.eq({
      "  a  Allow once",
      "  s  Always allow `go test` commands in this session",
      "  p  Always allow `go test` commands in every session",
      "  d  Deny",
    }, t.panel_choices())
    t.eq(0, #responses(fake), "nothing is answered by showing it")
    t.press("s")
    t.eq({ requestId = "ap_3", decision = "allow_always" }, one_response(fake))
    t.wait_for(function()
      return not t.panel()
    end, "kin's window closed")
    t.eq(mine, vim.api.nvim_get_current_win(), "back where the person was")
  end)

  it("announces itself on one line that fits, so no prompt takes the next keys", function()
    local fake = setup()
    vim.o.columns = 40
    local long = bash_request("ap_long")
    long.title = "Run " .. string.rep("a-very-long-command ", 10)
    fake:notify("approval/request", long)
    t.wait_panel("a-very-long-command")
    local msgs = vim.split(vim.api.nvim_exec2("messages", { output = true }).output, "\n")
    local last = msgs[#msgs]
    t.contains(last, "kin asks (:KinAnswer): Run")
    t.ok(vim.fn.strdisplaywidth(last) < 40, "fits the command line: " .. last)
    t.eq(false, vim.api.nvim_get_mode().blocking)
    t.eq("x…", require("kin.service").fit("x\nsecond line"))
  end)

  it("sends kin's option for an always-allow kept for every session", function()
    local fake = setup()
    fake:notify("approval/request", bash_request())
    t.wait_panel("go test")
    t.press("p")
    t.eq("allow_always_permanent", one_response(fake).decision)
  end)

  it("asks again when kin refuses the answer (-32602), not when kin resolved it meanwhile (-32013)", function()
    local fake = setup()
    local refusal = { code = -32602, message = "invalid params: decision" }
    fake.handlers["approval/respond"] = function()
      return nil, refusal
    end
    fake:notify("approval/request", bash_request("ap_r"))
    t.wait_panel("go test")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1 and #require("kin.prompts").items() == 1 and t.panel() ~= nil
    end, "the refused approval shown again")
    refusal = { code = -32013, message = "no such approval" }
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 2
    end, "the second answer")
    -- kin's frames are read in order: once the next request is shown, the -32013 was handled.
    fake:notify("approval/request", bash_request("ap_next"))
    t.wait_for(function()
      local cur = require("kin.prompts").current()
      return cur and cur.id == "ap_next"
    end, "the next approval")
    t.eq({ "ap_next" }, vim.tbl_map(function(it)
      return it.id
    end, require("kin.prompts").items()), "a resolved approval is not asked again")
  end)

  it("starts with the cursor on Deny: <CR> and <Esc> deny, digits do nothing", function()
    local fake = setup()
    fake:notify("approval/request", bash_request("ap_1"))
    t.wait_panel("go test")
    t.press("1234")
    t.eq(0, #responses(fake), "digits are not answers")
    t.press("<CR>")
    t.eq("deny", one_response(fake).decision)
    fake:notify("approval/request", bash_request("ap_2"))
    t.wait_panel("go test")
    t.press("<Esc>")
    t.wait_for(function()
      return #responses(fake) == 2
    end, "second answer")
    t.eq({ requestId = "ap_2", decision = "deny" }, responses(fake)[2])
  end)

  it("keeps Deny in the same place, on the same key, on every kind", function()
    local fake = setup()
    local rows, seen = {}, {}
    local names = vim.tbl_keys(KINDS)
    table.sort(names)
    for _, name in ipairs(names) do
      local p = KINDS[name]
      fake:notify("approval/request", p)
      t.wait_for(function()
        return t.panel() and require("kin.prompts").current() and require("kin.prompts").current().id == p.requestId
      end, name .. " shown")
      local choices = t.panel_choices()
      local last = choices[#choices]
      t.ok(last:match("^  d  "), name .. ": the refusal is the last line, on d: " .. vim.inspect(choices))
      local win = t.panel().choices
      local row = vim.fn.screenpos(win, #choices, 1).row
      rows[#rows + 1] = row
      seen[name] = t.screen_row(row)
      t.contains(seen[name], last:gsub("^%s+", ""), name .. " on the screen")
      t.press("d")
      t.wait_for(function()
        return #responses(fake) == #rows
      end, name .. " answered")
      t.eq("deny", responses(fake)[#rows].decision, name)
    end
    for i = 2, #rows do
      t.eq(rows[1], rows[i], "the Deny line moved: " .. vim.inspect(seen))
    end
  end)

  it("shows everything of each kind: the whole diff, the MCP call, the server's env names", function()
    local fake = setup()
    fake:notify("approval/request", KINDS.edit)
    t.wait_panel("+func main() { run() }")
    t.contains(t.panel_body(), "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-func main() {}\n+func main() { run() }")
    t.eq("diff", vim.bo[t.panel().body_buf].filetype)
    local marks = vim.api.nvim_buf_get_extmarks(t.panel().body_buf, require("kin.panel").ns, 0, -1, { details = true })
    local groups = {}
    for _, m in ipairs(marks) do
      groups[m[4].line_hl_group] = true
    end
    t.ok(groups.KinDiffAdd and groups.KinDiffDelete and groups.KinDiffHunk, "diff lines highlighted: " .. vim.inspect(groups))
    t.press("d")
    one_response(fake)
    fake:notify("approval/request", KINDS.mcp)
    t.wait_panel("Server:      docs")
    t.contains(t.panel_body(), "Destination: https://mcp.example.com/mcp")
    t.contains(t.panel_body(), "Tool:        query-docs")
    t.contains(t.panel_body(), '"query": "react hooks"')
    t.press("d")
    fake:notify("approval/request", KINDS.server_launch)
    t.wait_panel("Passes:      env TOKEN=●●●●")
    t.eq({ "  a  Allow once", "  t  Trust server", "  d  Deny" }, t.panel_choices())
    t.press("t")
    t.wait_for(function()
      return #responses(fake) == 3
    end, "trust")
    t.eq("trust", responses(fake)[3].decision)
  end)

  it("a trust card shows every item, a hook's whole command, the changed ones marked, and no nil", function()
    -- kin's own project_trust request, as recorded in the golden frames.
    local root = vim.env.KIN_TEST_ROOT or vim.fn.getcwd()
    local f = assert(io.open(root .. "/../../rpc/testdata/golden/approval_request.json", "r"))
    local doc = vim.json.decode(f:read("*a"), { luanil = { object = true, array = true } })
    f:close()
    local p
    for _, fr in ipairs(doc.frames) do
      if fr.params and fr.params.kind == "project_trust" then
        p = fr.params
      end
    end
    t.ok(p and #p.items >= 3, "a project_trust frame with items")
    local hook
    for _, it in ipairs(p.items) do
      if it.kind == "hook" then
        hook = it
      end
    end
    t.ok(hook and hook.detail, "the frame has a hook with its command")
    -- A hook that changed since it was trusted, whose multi-line command hides a bidi override
    -- and an escape sequence; kin's own frame first, then the changed one.
    local changed = vim.deepcopy(p)
    changed.requestId = "ap_changed"
    changed.items = { {
      kind = "hook", name = "PostToolUse Edit", path = ".kin/hooks.json PostToolUse[0].hooks[0]", digest = "sha256:ab",
      changed = true, detail = "sh .kin/fmt.sh 'invoice_\u{202e}gpj.exe'\nrm -rf build\x1b[2K",
    } }
    local fake = setup()
    fake:notify("approval/request", p)
    t.wait_panel(hook.detail)
    local body = t.panel_body()
    for i, it in ipairs(p.items) do
      t.contains(body, ("%d. %s"):format(i, it.kind), "item " .. i .. " kind")
      for _, field in ipairs({ "name", "path", "detail" }) do
        if it[field] then
          t.contains(body, it[field], "item " .. i .. " " .. field)
        end
      end
    end
    t.contains(body, "runs:    " .. hook.detail, "the hook's command, said as one")
    t.contains(body, p.warning)
    t.not_contains(body, "nil")
    t.not_contains(body, "CHANGED", "nothing in kin's frame changed")
    t.eq({ "  t  Trust them", "  d  Not now (none of them runs or is read)" }, t.panel_choices())
    t.press("d")
    t.eq({ requestId = p.requestId, decision = "deny" }, one_response(fake))
    fake:notify("approval/request", changed)
    t.wait_panel("PostToolUse Edit")
    body = t.panel_body()
    t.contains(body, "1. hook PostToolUse Edit  [CHANGED since you trusted it]")
    t.contains(body, "runs:    sh .kin/fmt.sh 'invoice_\\u202egpj.exe'\n            rm -rf build\\x1b[2K")
    t.not_contains(body, "\u{202e}", "no bidi override reaches the screen")
    t.not_contains(body, "\x1b", "no escape sequence reaches the screen")
  end)

  it("queues questions: one shown, <Tab> shows the next, a resolved one is dropped", function()
    local fake = setup()
    fake:send_many({
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_1") },
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_2") },
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_3") },
      { jsonrpc = "2.0", method = "approval/resolved", params = { requestId = "ap_2", decision = "deny", reason = "cancelled" } },
    })
    t.wait_for(function()
      return #require("kin.prompts").items() == 2
    end, "two open questions")
    t.contains(vim.wo[t.panel().body].winbar, "(1 of 2)")
    t.press("<Tab>")
    t.eq("ap_3", require("kin.prompts").current().id)
    t.press("a")
    t.eq({ requestId = "ap_3", decision = "allow_once" }, one_response(fake))
    t.eq("ap_1", require("kin.prompts").current().id)
    t.press("d")
    t.wait_for(function()
      return #responses(fake) == 2
    end, "second answer")
    t.eq({ requestId = "ap_1", decision = "deny" }, responses(fake)[2])
  end)

  -- The next question used to take the window (and so the keys) of the one just answered: a key
  -- typed ahead, or pressed as kin resolved the shown question, answered a question the person
  -- never saw (here: allowing `rm -rf ~`). The keys go back where the person came from, as the
  -- focus goes back to the input in VS Code; the next question waits, shown, for :KinAnswer.
  it("an answer gives the keys back: a key typed ahead never answers the question shown next", function()
    local fake = setup()
    vim.cmd("enew")
    local mine = vim.api.nvim_get_current_win()
    local rm = vim.tbl_extend("force", bash_request("ap_2"), { title = "Run rm -rf ~", command = "rm -rf ~" })
    fake:send_many({
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_1") },
      { jsonrpc = "2.0", method = "approval/request", params = rm },
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_3") },
    })
    t.wait_for(function()
      return #require("kin.prompts").items() == 3
    end, "three open questions")
    t.press("aa") -- one answer, and the same key typed ahead
    t.wait_for(function()
      return #responses(fake) >= 1
    end, "approval/respond")
    vim.wait(200)
    t.eq({ { requestId = "ap_1", decision = "allow_once" } }, responses(fake), "the key typed ahead answered nothing")
    t.eq("ap_2", require("kin.prompts").current().id, "the next question is open")
    t.wait_panel("rm -rf ~")
    t.eq(mine, vim.api.nvim_get_current_win(), "the keys are back where the person was")

    -- kin resolves the question shown while the person is in its window: the keys leave too.
    require("kin").answer()
    t.ok(require("kin.panel").has_focus())
    fake:notify("approval/resolved", { requestId = "ap_2", decision = "deny", reason = "cancelled" })
    t.wait_for(function()
      return #require("kin.prompts").items() == 1
    end, "ap_2 resolved")
    t.eq(mine, vim.api.nvim_get_current_win(), "a key pressed now does not answer ap_3")
    vim.api.nvim_feedkeys("a", "x", false)
    vim.wait(200)
    t.eq(1, #responses(fake))
  end)

  -- A newer revision of the card shown (the file changed while the person decided) took its
  -- place under the person's keys: a key typed ahead, or pressed as the new card came, allowed a
  -- diff they never saw (one made on the new text: it may undo what they just typed), and kin
  -- took that answer, which named the new revision. The keys leave, as when the card is resolved.
  it("a newer revision of the card shown gives the keys back: a key pressed as it came answers nothing", function()
    local fake = setup()
    vim.cmd("enew")
    local mine = vim.api.nvim_get_current_win()
    local first = vim.deepcopy(KINDS.edit)
    fake:notify("approval/request", first)
    t.wait_panel("func main() { run() }")
    require("kin").answer()
    t.ok(require("kin.panel").has_focus(), "the person is in kin's window")
    local revised = vim.tbl_extend("force", vim.deepcopy(KINDS.edit), {
      revision = 1,
      diffs = { { path = "/a/main.go", unified = "--- a/main.go\n+++ b/main.go\n@@ -1,2 +1 @@\n-// typed while kin asked\n func main() {}\n" } },
    })
    fake:notify("approval/request", revised)
    t.wait_panel("kin updated this request")
    vim.api.nvim_feedkeys("a", "x", false)
    vim.wait(200)
    t.eq({}, responses(fake), "a key pressed as the new card came answered nothing")
    t.eq(mine, vim.api.nvim_get_current_win(), "the keys are back where the person was")
    t.press("a")
    t.eq({ requestId = "k_edit", decision = "allow_once", revision = 1 }, one_response(fake))
  end)

  it("closes when kin resolves the request and sends no late answer", function()
    local fake = setup()
    fake:notify("approval/request", bash_request("ap_9"))
    t.wait_panel("go test")
    local keys_buf = t.panel().choices_buf
    fake:notify("approval/resolved", { requestId = "ap_9", decision = "deny", reason = "cancelled" })
    t.wait_for(function()
      return not t.panel()
    end, "kin's window closed")
    -- A key pressed in the hidden buffer answers nothing.
    vim.api.nvim_buf_call(keys_buf, function()
      vim.api.nvim_feedkeys("a", "x", false)
    end)
    t.eq(0, #responses(fake))
  end)

  it("q hides the question, :KinAnswer brings it back, still open", function()
    local fake = setup()
    fake:notify("approval/request", bash_request("ap_5"))
    t.wait_panel("go test")
    t.press("q")
    t.eq(nil, t.panel(), "hidden")
    t.eq(0, #responses(fake))
    vim.cmd("KinAnswer")
    t.ok(t.panel(), "shown again")
    t.eq(t.panel().choices, vim.api.nvim_get_current_win(), ":KinAnswer moves into kin's window")
    t.press("a")
    t.eq("allow_once", one_response(fake).decision)
  end)

  it("follows the person to another tab page", function()
    local fake = setup()
    fake:notify("approval/request", bash_request("ap_tab"))
    t.wait_panel("go test")
    vim.cmd("tabnew")
    vim.cmd("KinAnswer")
    local p = t.panel()
    t.eq(vim.api.nvim_get_current_tabpage(), vim.api.nvim_win_get_tabpage(p.body), "shown in this tab page")
    t.eq(p.choices, vim.api.nvim_get_current_win())
    t.press("d")
    t.eq("deny", one_response(fake).decision)
  end)

  it("scrolls a diff longer than the window from the choices, and says where it is", function()
    local fake = setup()
    local lines = { "--- a/long.go", "+++ b/long.go", "@@ -1,0 +1,200 @@" }
    for i = 1, 200 do
      lines[#lines + 1] = "+\tline " .. i
    end
    fake:notify("approval/request", vim.tbl_extend("force", KINDS.edit, { requestId = "ap_long", diffs = { { path = "/a/long.go", unified = table.concat(lines, "\n") } } }))
    t.wait_panel("line 200")
    local body = t.panel().body
    t.ok(vim.api.nvim_win_get_height(body) < 200, "the window is smaller than the diff")
    t.contains(vim.api.nvim_eval_statusline(vim.wo[body].winbar, { winid = body, use_winbar = true }).str, "/205 lines")
    t.press("G")
    t.eq(205, vim.fn.line("w$", body), "the last line is in view")
  end)

  it("sizes a float to its tab-indented text with the buffer's own tabstop, losing no row", function()
    vim.o.lines = 50
    local fake = setup({ approval = { position = "float" } })
    local lines = { "--- a/t.go", "+++ b/t.go", "@@ -1,0 +1,8 @@" }
    -- Seven tabs at tabstop 8 and a few characters wrap once in a float 64 columns wide (at
    -- tabstop 4 they would not): every line takes two rows.
    for i = 1, 8 do
      lines[#lines + 1] = "+" .. string.rep("\t", 7) .. "x" .. i .. string.rep("y", 10)
    end
    fake:notify("approval/request", vim.tbl_extend("force", KINDS.edit, { requestId = "ap_tabs", diffs = { { path = "/a/t.go", unified = table.concat(lines, "\n") } } }))
    t.wait_panel("x8")
    local body = t.panel().body
    t.ok(vim.api.nvim_win_get_config(body).relative ~= "", "a float")
    local rows = vim.api.nvim_win_text_height(body, {}).all
    t.eq(8, vim.bo[t.panel().body_buf].tabstop)
    t.eq(2 * 8 + 5, rows, "the tab-indented lines wrap once each")
    t.eq(rows + 1, vim.api.nvim_win_get_height(body), "the float is as high as its text takes, and its title bar")
    t.eq(1, vim.fn.line("w0", body))
    t.eq(vim.api.nvim_buf_line_count(t.panel().body_buf), vim.fn.line("w$", body), "every line is in view")
  end)
end)

describe("questions", function()
  it("a picker that never calls back holds nothing up, also after :KinRestart", function()
    local fake = setup()
    vim.ui.input = function() end -- a picker that loses its callback
    fake:notify("elicitation/request", {
      requestId = "el_1", sessionId = "s_1", server = "asker", mode = "form", message = "What is your name?",
      fields = { { name = "name", title = "Name", type = "string", required = true } },
    })
    t.wait_panel("asker asks: What is your name?")
    t.press("a") -- starts answering: the input never comes back
    fake:notify("approval/request", bash_request("ap_after"))
    t.wait_for(function()
      return #require("kin.prompts").items() == 2
    end, "the approval is queued")
    t.press("<Tab>")
    t.contains(t.panel_body(), "go test ./...")
    t.press("a")
    t.eq({ requestId = "ap_after", decision = "allow_once" }, one_response(fake))
    -- The stuck question can still be declined.
    t.contains(t.panel_body(), "Answering…")
    t.press("d")
    t.wait_for(function()
      return #fake:sent("elicitation/respond") == 1
    end, "declined")
    t.eq("decline", fake:sent("elicitation/respond")[1].params.action)
    -- A restart empties the queue; the new kin's questions show.
    fake:notify("elicitation/request", { requestId = "el_2", server = "asker", mode = "form", message = "Again?", fields = {} })
    t.wait_panel("Again?")
    t.press("a")
    vim.cmd("KinRestart")
    t.eq(nil, t.panel(), "nothing of the old kin is shown")
    fake:notify("approval/request", bash_request("ap_new"))
    t.wait_panel("go test")
    t.press("d")
    t.wait_for(function()
      return #responses(fake) == 2
    end, "the new kin's approval answered")
    t.eq("ap_new", responses(fake)[2].requestId)
  end)

  it("after :KinRestart, what kin still asks (session/resume pending) is shown again", function()
    local fake = setup()
    fake.handlers["session/resume"] = function(p)
      return { session = { sessionId = p.sessionId, turns = 1 }, history = {}, pending = { bash_request("ap_pending") } }
    end
    require("kin").ask("hello")
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    vim.cmd("KinRestart")
    t.wait_panel("go test")
    t.eq("ap_pending", require("kin.prompts").current().id)
    t.press("a")
    t.eq({ requestId = "ap_pending", decision = "allow_once" }, one_response(fake))
  end)
end)
