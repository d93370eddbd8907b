-- Against the real `kin serve` and the scripted mock model (tests/rules.json), started by
-- tests/run.sh, which sets KIN_BIN, OPENAI_BASE_URL and OPENAI_API_KEY.
local t = require("harness")

local kin = require("realkin")
kin.need_kin()
local KIN = kin.KIN
local TESTS = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))

local env = {}

before_each(function()
  kin.fresh(env)
  kin.setup(env)
end)

local chat_text, turn_over, traced, sent = kin.text, kin.turn_over, kin.traced, kin.sent

local function received(method)
  return #traced("<-", method)
end

-- Cases that need kin's MCP support skip while the binary has none (initialize says so).
local function need_mcp()
  require("kin.service").wait_ready(30000)
  local init = require("kin.service").ctx.init or {}
  if not (init.capabilities and init.capabilities.mcp) then
    t.skip_case("this kin build reports capabilities.mcp = false")
  end
end

-- Waits for done(), answering each question kin's window shows with the next key of keys (as
-- a person would: :KinAnswer, then the key); records what each showed.
local function answering(keys, done, what)
  local seen = {}
  local shown_id
  t.wait_for(function()
    if done() then
      return true
    end
    local cur = t.panel() and require("kin.prompts").current()
    if cur and cur.id ~= shown_id then
      shown_id = cur.id
      seen[#seen + 1] = { id = cur.id, body = t.panel_body(), choices = t.panel_choices() }
      local key = table.remove(keys, 1)
      if key then
        vim.schedule(function()
          t.press(key)
        end)
      end
    end
    return false
  end, what or "the turn to end", 60000)
  return seen
end

describe("real kin", function()
  it("streams an answer into the chat buffer", function()
    vim.cmd("KinChat hello there")
    t.wait_for(turn_over, "the turn to end", 60000)
    t.contains(chat_text(), "## You\n\nhello there\n\n## kin\n\nHello from the mock.")
    -- The mock paces its three chunks (delayMs in rules.json) as a real service does;
    -- unpaced, kin rightly joins deltas the editor has not read yet into one.
    t.ok(received("turn/delta") >= 2, "the answer came in several deltas")
    -- kin logs to the file :KinLog opens
    vim.cmd("KinLog")
    t.eq(env.home .. "/kin.log", vim.api.nvim_buf_get_name(0))
  end)

  it("keeps the conversation across :KinRestart", function()
    vim.cmd("KinChat hello one")
    t.wait_for(turn_over, "the first turn to end", 60000)
    local first_pid = require("kin").pid()
    local sid = require("kin.chat").state.current
    vim.cmd("KinRestart")
    t.ok(vim.uv.kill(first_pid, 0) ~= 0, "the first kin is gone")
    require("kin").ask("hello two")
    t.wait_for(function()
      return chat_text():find("hello two", 1, true) and turn_over()
    end, "the second turn to end", 60000)
    t.ok(require("kin").pid() ~= first_pid, "a new kin runs")
    t.eq(sid, require("kin.chat").state.current)
    t.eq(1, #sent("session/resume"), "the question waited for the chat's own re-attachment")
    local _, answers = chat_text():gsub("Hello from the mock%.", "")
    t.eq(2, answers)
  end)

  it("a question asked right after :KinNew goes to the new session, also while kin restarts", function()
    vim.cmd("KinChat hello one")
    t.wait_for(turn_over, "the first turn to end", 60000)
    local first = require("kin.chat").state.current
    vim.cmd("KinRestart") -- the chat re-attaches the first session meanwhile
    vim.cmd("KinNew")
    require("kin").ask("hello two")
    t.wait_for(function()
      return chat_text():find("hello two", 1, true) and turn_over()
    end, "the second turn to end", 60000)
    local now = require("kin.chat").state.current
    t.ok(now ~= first, "a new session")
    local starts = sent("turn/start")
    t.eq(1, #starts, "only the second question went to this kin, once")
    t.eq(now, starts[#starts].params.sessionId, "the question went to the new session")
    t.not_contains(chat_text(), "hello one")
  end)

  it("runs a command the person allowed, and shows its output folded, with the exit status", function()
    vim.cmd("KinChat please run it")
    local previews = answering({ "a" }, turn_over)
    local text = chat_text()
    t.contains(text, "[tool] bash")
    t.contains(text, "— completed (exit status 0)")
    t.contains(text, "The command printed kin-42.")
    t.eq(1, #previews)
    t.contains(previews[1].body, "echo kin-$((40+2))")
    t.contains(previews[1].body, "# cwd: " .. env.ws)
    t.contains(previews[1].body, "# sandbox: ")
    -- The output, under the call, folded in the chat window.
    local tr = require("kin.chat").current()
    local lines = vim.api.nvim_buf_get_lines(tr.buf, 0, -1, false)
    local call_row, out_row
    for i, l in ipairs(lines) do
      if l:find("[tool] bash", 1, true) then
        call_row = i
      elseif call_row and not out_row and l == "  │ kin-42" then
        out_row = i
      end
    end
    t.ok(call_row and out_row == call_row + 1, "the output is right under the call:\n" .. table.concat(lines, "\n"))
    t.eq("  │ exit status 0", lines[out_row + 1])
    local win = require("kin.chat").state.win
    t.ok(vim.fn.win_execute(win, "echo foldclosed(" .. out_row .. ")"):match("%d+") == tostring(out_row), "the output is folded")
    vim.api.nvim_win_call(win, function()
      vim.cmd(out_row .. "foldopen")
    end)
    t.eq(-1, vim.fn.win_execute(win, "echo foldclosed(" .. out_row .. ")") + 0, "zo shows it")
    local r = sent("approval/respond")
    t.eq("allow_once", r[1].params.decision)
    t.ok(received("approval/resolved") >= 1, "kin resolved the approval")
    -- Redrawn from kin's history after a restart, the output is folded too.
    local pid = require("kin").pid()
    vim.cmd("KinRestart")
    t.wait_for(function()
      return require("kin").pid() ~= pid and #sent("session/resume") == 1
        and not require("kin.chat").state.stale[require("kin.chat").state.current]
    end, "the session re-attached", 60000)
    tr = require("kin.chat").current()
    lines = vim.api.nvim_buf_get_lines(tr.buf, 0, -1, false)
    for i, l in ipairs(lines) do
      if l == "  │ kin-42" then
        out_row = i
      end
    end
    t.ok(vim.fn.win_execute(win, "echo foldclosed(" .. out_row .. ")"):match("%d+") == tostring(out_row), "folded after resume:\n" .. table.concat(lines, "\n"))
  end)

  it("three approvals in a row leave the chat's layout as it was", function()
    vim.o.lines, vim.o.columns = 40, 140
    vim.cmd("KinChat")
    local st = require("kin.chat").state
    local code = vim.fn.win_getid(vim.fn.winnr("h"))
    local function heights()
      return {
        transcript = vim.api.nvim_win_get_height(st.win),
        input = vim.api.nvim_win_get_height(st.input_win),
        code = vim.api.nvim_win_get_height(code),
      }
    end
    local before = heights()
    t.eq(3, before.input)
    for i = 1, 3 do
      require("kin").ask("please run it " .. i)
      local seen = answering({ "a" }, function()
        return chat_text():find("please run it " .. i, 1, true) and turn_over()
      end)
      t.eq(1, #seen, "one approval in turn " .. i)
      t.eq(before, heights(), "after approval " .. i)
    end
    t.eq(3, #sent("approval/respond"))
  end)

  it("denies a command with Deny", function()
    vim.cmd("KinChat please run it")
    local previews = answering({ "d" }, turn_over)
    local text = chat_text()
    t.contains(text, "— denied")
    t.not_contains(text, "kin-42.")
    t.eq(1, #previews)
    t.eq("deny", sent("approval/respond")[1].params.decision)
  end)

  it("answers an MCP server's elicitation", function()
    need_mcp()
    require("kin.service").stop()
    vim.fn.mkdir(env.ws .. "/.kin", "p")
    vim.fn.writefile({ vim.json.encode({
      mcpServers = { asker = { command = "python3", args = { TESTS .. "/mcp_elicit.py" } } },
    }) }, env.ws .. "/.kin/mcp.json")
    -- The launch (server_launch), then the call (tool_call), then the question (Answer).
    t.script_input({ "Ana" })
    t.script_select({ "Dogs", "Yes" })
    require("kin.service").with_client(function() end)
    local previews = answering({ "t" }, function()
      local s = require("kin.service").ctx.mcp.asker
      return s and s.state == "connected"
    end, "the asker MCP server to connect")
    vim.cmd("KinChat please elicit my name")
    local more = answering({ "a", "a" }, turn_over)
    t.contains(chat_text(), "Greeted Ana.")
    -- The server's order (name, pet, agree), with titles first and descriptions.
    t.eq("Name (1/3) — Your full name: ", t.inputs[1].prompt)
    t.eq("Pet (2/3, optional): ", t.selects[1].prompt)
    t.eq({ "Cats (default)", "Dogs", "(leave empty)" }, t.selects[1].labels)
    t.eq("Boolean (3/3, optional) — I agree to the terms: ", t.selects[2].prompt)
    t.eq({ name = "Ana", pet = "pet-2", agree = true }, sent("elicitation/respond")[1].params.content)
    t.contains(previews[1].body, "Server:      asker")
    local form = more[2].body
    t.contains(form, "asker asks: What is your name?")
    local name, pet, agree = form:find("- Name (", 1, true), form:find("- Pet (", 1, true), form:find("- Boolean (", 1, true)
    t.ok(name and pet and agree and name < pet and pet < agree, "the server's order in kin's window:\n" .. form)
    t.contains(form, "I agree to the terms")
    t.contains(form, "default Cats")
  end)

  -- A person who takes their time over a form (here four times the server's 2 s timeout; in life
  -- two minutes against 30 s): kin stops the call's clock while the form waits, the answer
  -- reaches the server and the call completes. The clock runs while the server reads the call and
  -- asks, and while it reads the answer and replies: 2 s leave a loaded machine room for both.
  it("a person who takes two minutes over a form still gets their answer to the server", function()
    need_mcp()
    require("kin.service").stop()
    vim.fn.mkdir(env.ws .. "/.kin", "p")
    vim.fn.writefile({ vim.json.encode({
      mcpServers = { asker = { command = "python3", args = { TESTS .. "/mcp_elicit.py" }, timeout = 2000 } },
    }) }, env.ws .. "/.kin/mcp.json")
    t.script_select({ "Cats", "Yes" })
    local asked_at
    vim.ui.input = function(_, cb)
      asked_at = vim.uv.hrtime()
      -- The form is on the screen; the person answers well after the server's timeout.
      vim.defer_fn(function()
        cb("Ana")
      end, 8000)
    end
    require("kin.service").with_client(function() end)
    answering({ "t" }, function()
      local s = require("kin.service").ctx.mcp.asker
      return s and s.state == "connected"
    end, "the asker MCP server to connect")
    vim.cmd("KinChat please elicit my name")
    answering({ "a", "a" }, turn_over)
    t.ok(asked_at, "the form was asked")
    t.contains(chat_text(), "Greeted Ana.")
    t.not_contains(chat_text(), "outcome is unknown")
    t.eq({ name = "Ana", pet = "pet-1", agree = true }, sent("elicitation/respond")[1].params.content)
  end)

  it("adds a server through :KinMcp into the project's mcp.json", function()
    require("kin").setup({
      cmd = { KIN, "serve" },
      env = { KIN_HOME = env.home, FILES_TOKEN = "from-the-environment" },
      log_file = env.home .. "/kin.log",
    })
    need_mcp()
    t.script_select({ "+ Add a server", "project", "stdio" })
    t.script_input({ "files", "npx -y @modelcontextprotocol/server-filesystem /data", "TOKEN", "" })
    vim.fn.inputsecret = function()
      return "${FILES_TOKEN}"
    end
    t.capture_notify()
    vim.cmd("KinMcp")
    t.wait_for(function()
      return t.notes_text():find("added MCP server files", 1, true)
    end, "the add to finish", 60000)
    local file = env.ws .. "/.kin/mcp.json"
    t.ok(vim.fn.filereadable(file) == 1, file .. " written")
    local doc = vim.json.decode(table.concat(vim.fn.readfile(file), "\n"))
    local entry = doc.mcpServers.files
    t.eq("npx", entry.command)
    t.eq({ "-y", "@modelcontextprotocol/server-filesystem", "/data" }, entry.args)
    t.eq({ TOKEN = "${FILES_TOKEN}" }, entry.env)
    -- and kin lists it
    local listed
    require("kin.service").request("mcp/list", {}, function(r)
      listed = r
    end)
    t.wait_for(function()
      return listed
    end, "mcp/list")
    local names = vim.tbl_map(function(s)
      return s.name
    end, listed.servers or {})
    t.ok(vim.tbl_contains(names, "files"), "listed: " .. vim.inspect(listed))
  end)

  it(":checkhealth kin passes", function()
    require("kin").setup({
      cmd = { KIN, "serve" },
      env = { KIN_HOME = env.home, OPENAI_API_KEY = "sk-kin-nvim-secret-value" },
      log_file = env.home .. "/kin.log",
    })
    vim.env.PATH = vim.fs.dirname(KIN) .. ":" .. vim.env.PATH
    vim.cmd("checkhealth kin")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    t.contains(text, "configured: model")
    t.contains(text, "API key present")
    t.not_contains(text, "ERROR", text)
    t.not_contains(text, "sk-kin-nvim-secret-value", "the key's value never shows")
  end)

  it("leaves no kin process behind after :qa", function()
    local pidfile = vim.fn.tempname()
    local script = vim.fn.tempname() .. ".lua"
    vim.fn.writefile({
      ("vim.opt.rtp:prepend(%q)"):format(vim.env.KIN_TEST_ROOT),
      "vim.cmd('runtime plugin/kin.lua')",
      ("require('kin').setup({ cmd = { %q, 'serve' }, env = { KIN_HOME = %q }, log_file = false })"):format(KIN, env.home),
      "require('kin.service').with_client(function(c)",
      ("  vim.fn.writefile({ tostring(c.pid) }, %q)"):format(pidfile),
      "  vim.cmd('qa')",
      "end)",
    }, script)
    local nvim = vim.env.KIN_TEST_NVIM or vim.v.progpath
    local res = vim.system({ nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile " .. script }):wait(60000)
    t.eq(0, res.code, "nvim exited: " .. (res.stderr or ""))
    local pid = tonumber(vim.fn.readfile(pidfile)[1])
    t.ok(pid and pid > 0, "kin's pid was written")
    local alive = vim.uv.kill(pid, 0)
    t.ok(alive ~= 0, ("kin (pid %d) still runs after :qa"):format(pid))
  end)
end)
