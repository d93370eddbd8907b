local t = require("harness")
local fake_kin = require("fake_kin")

local ROWS = {
  servers = {
    { name = "files", scope = "project", transport = "stdio", enabled = true, state = "connected", tools = 14, launch = "npx -y server /data", env = { "TOKEN=●●●●" }, trusted = true },
    { name = "api", scope = "global", transport = "http", enabled = true, state = "needs_login", tools = 0, launch = "https://example.com/mcp", headers = { "X-Tenant: ●●●●" }, auth = "oauth", lastError = "sign-in required" },
  },
  foreign = { { name = "legacy", scope = "foreign", transport = "stdio", launch = "node server.js", file = "/w/.mcp.json" } },
  warnings = {},
  notices = {},
}

local function setup(extra)
  local handlers = vim.tbl_extend("force", {
    ["mcp/list"] = function()
      return ROWS
    end,
  }, extra or {})
  local fake = fake_kin.new({ handlers = handlers })
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  return fake
end

local function secrets(values)
  vim.fn.inputsecret = function(prompt)
    table.insert(t.secret_prompts, prompt)
    return table.remove(values, 1) or ""
  end
  t.secret_prompts = {}
end

local function wait_sent(fake, method, n)
  t.wait_for(function()
    return #fake:sent(method) >= (n or 1)
  end, method)
  return fake:sent(method)[n or 1].params
end

describe(":KinMcp", function()
  it("lists servers with their state and foreign rows", function()
    setup()
    t.script_select({ false })
    vim.cmd("KinMcp")
    t.wait_for(function()
      return t.selects and #t.selects == 1
    end, "the manager")
    local labels = t.selects[1].labels
    t.eq("files  [project, stdio]  connected (14 tools)", labels[1])
    t.eq("api  [global, http]  needs_login", labels[2])
    t.contains(labels[3], "legacy  [foreign: /w/.mcp.json]")
    t.eq({ "+ Add a server", "Apply changes (reconnect from the files)", "Check every server" }, vim.list_slice(labels, 4))
  end)

  it("adds a stdio server with secret env values", function()
    local fake = setup()
    t.script_select({ "+ Add a server", "project", "stdio" })
    t.script_input({ "docs", "npx -y '@scope/server docs' --flag", "API_TOKEN", "" })
    secrets({ "s3cret" })
    vim.cmd("KinMcp")
    local p = wait_sent(fake, "mcp/add")
    t.eq({ scope = "project", name = "docs", config = { command = "npx", args = { "-y", "@scope/server docs", "--flag" }, env = { API_TOKEN = "s3cret" } } }, p)
    t.contains(t.secret_prompts[1], "API_TOKEN")
  end)

  it("adds an http server with a header", function()
    local fake = setup()
    t.script_select({ "+ Add a server", "global", "http" })
    t.script_input({ "remote", "https://mcp.example.com/mcp", "Authorization", "" })
    secrets({ "Bearer ${TOKEN}" })
    vim.cmd("KinMcp")
    local p = wait_sent(fake, "mcp/add")
    t.eq({ scope = "global", name = "remote", config = { type = "http", url = "https://mcp.example.com/mcp", headers = { Authorization = "Bearer ${TOKEN}" } } }, p)
  end)

  -- A server's own error message (what it answered the probe) reaches the explanation as it
  -- was written, line breaks and all: the check float refused it (a buffer line cannot hold one).
  -- Shown twice (the window still open), a server's instructions failed with "Failed to rename
  -- buffer" (a buffer of that name existed) and left an empty buffer behind.
  it("a server's instructions shown again replace the view shown before", function()
    local instr = require("kin.mcpinstr")
    local row = { name = "files", instructions = "Use the search tool first.", instructionsHash = "h1" }
    instr.show(row)
    local bufs = #vim.api.nvim_list_bufs()
    row.instructions, row.instructionsHash = "Use the read tool first.", "h2"
    instr.show(row)
    t.eq("kin://mcp/files/instructions", vim.api.nvim_buf_get_name(0))
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    t.eq("Use the read tool first.", lines[#lines], "the text shown now")
    t.eq(bufs, #vim.api.nvim_list_bufs(), "no buffer left behind")
  end)

  it("a check whose explanation holds line breaks is shown, a line each", function()
    local fake = setup({
      ["mcp/check"] = function(p)
        return { results = { { name = p.name, ready = false, state = "connected", explanation = "connected, but it does not answer tools/list: boom\nat line 2" } } }
      end,
    })
    require("kin.mcp").check("files")
    t.eq({ name = "files" }, wait_sent(fake, "mcp/check"))
    t.wait_for(function()
      return require("kin.mcp").last_check
    end, "the check float")
    local lines = vim.api.nvim_buf_get_lines(require("kin.mcp").last_check.buf, 0, -1, false)
    t.eq({ "✗ files: connected — connected, but it does not answer tools/list: boom", "at line 2" }, lines)
  end)

  it("disables, removes, checks, signs in, adopts and applies", function()
    local fake = setup({
      ["mcp/check"] = function(p)
        return { results = { { name = p.name, ready = false, state = "needs_login", explanation = "api uses OAuth: run mcp/login" } } }
      end,
      ["mcp/login"] = function()
        return { state = "connected" }
      end,
      ["mcp/apply"] = function()
        return { servers = { { name = "files", state = "connected", tools = 14 } } }
      end,
    })
    t.capture_notify()
    t.script_select({ "files", "Disable" })
    vim.cmd("KinMcp")
    t.eq({ scope = "project", name = "files", enabled = false }, wait_sent(fake, "mcp/setEnabled"))

    t.script_select({ "files", "Remove", "Remove files" })
    vim.cmd("KinMcp")
    t.eq({ scope = "project", name = "files" }, wait_sent(fake, "mcp/remove"))

    t.script_select({ "api", "Check" })
    vim.cmd("KinMcp")
    t.eq({ name = "api" }, wait_sent(fake, "mcp/check"))
    t.wait_for(function()
      return require("kin.mcp").last_check
    end, "the check float")
    local lines = vim.api.nvim_buf_get_lines(require("kin.mcp").last_check.buf, 0, -1, false)
    t.eq({ "✗ api: needs_login — api uses OAuth: run mcp/login" }, lines)
    require("kin.mcp").last_check.close()

    t.script_select({ "api", "Sign in" })
    vim.cmd("KinMcp")
    t.eq({ name = "api" }, wait_sent(fake, "mcp/login"))
    t.wait_for(function()
      return t.notes_text():find("api: connected", 1, true)
    end, "sign-in result")

    t.script_select({ "legacy", "Adopt legacy" })
    vim.cmd("KinMcp")
    t.eq({ name = "legacy" }, wait_sent(fake, "mcp/adopt"))

    t.script_select({ "Apply changes" })
    vim.cmd("KinMcp")
    wait_sent(fake, "mcp/apply")
    t.wait_for(function()
      return t.notes_text():find("files: connected", 1, true)
    end, "apply result")
  end)

  it("edits a server, asking masked secrets again", function()
    local fake = setup()
    t.script_select({ "files", "Edit" })
    t.script_input({ "npx -y server /data2", "" })
    secrets({ "new-token" })
    vim.cmd("KinMcp")
    local p = wait_sent(fake, "mcp/update")
    t.eq({ scope = "project", name = "files", config = { command = "npx", args = { "-y", "server", "/data2" }, env = { TOKEN = "new-token" } } }, p)
    t.eq("npx -y server /data", t.inputs[1].default)
  end)
end)

describe(":KinGrants", function()
  it("revokes the chosen grant", function()
    local fake = setup({
      ["grants/list"] = function()
        return { grants = {
          { id = "g_1", type = "bash", key = "bash:go test", label = "`go test` commands", scope = "session", sessionId = "s_1" },
          { id = "trust:files", type = "trust", key = "files", label = "MCP server files", scope = "permanent" },
        } }
      end,
    })
    t.script_select({ "MCP server files", "Revoke" })
    vim.cmd("KinGrants")
    t.eq({ id = "trust:files" }, wait_sent(fake, "grants/revoke"))
    t.eq("`go test` commands  [bash, session s_1]", t.selects[1].labels[1])
  end)
end)

describe(":checkhealth kin", function()
  it("reports the model and each MCP server without errors", function()
    local bin = vim.fn.tempname()
    vim.fn.writefile({ "#!/bin/sh", 'echo "kin 9.9.9"' }, bin)
    vim.fn.setfperm(bin, "rwxr-xr-x")
    local url = t.http_server(401) -- a model service that wants a key: it answers
    local fake = fake_kin.new({ handlers = {
      ["mcp/list"] = function()
        return ROWS
      end,
      initialize = function()
        return { protocolVersion = "1", serverInfo = { name = "kin", version = "x" }, capabilities = { mcp = true },
          model = { configured = true, model = "fake-model", baseUrl = url } }
      end,
    } })
    require("kin").setup({ spawn = fake.spawn, log_file = false, cmd = { bin, "serve" } })
    vim.cmd("checkhealth kin")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    t.contains(text, "version: kin 9.9.9")
    t.contains(text, "configured: model fake-model")
    t.contains(text, "OK the model service at " .. url .. " answers (answered HTTP 401)")
    t.contains(text, "files [project, stdio]: connected, 14 tools")
    t.contains(text, "api [global, http]: needs_login, 0 tools — sign-in required")
    t.contains(text, "legacy in /w/.mcp.json is not loaded")
    t.not_contains(text, "ERROR")
  end)

  it("says whether commands run confined, and why not with the fix", function()
    local sandbox
    local fake = fake_kin.new({ handlers = {
      initialize = function()
        return { protocolVersion = "1", serverInfo = { name = "kin", version = "x" }, model = { configured = true, model = "m" }, sandbox = sandbox }
      end,
      ["mcp/list"] = function()
        return { servers = {} }
      end,
    } })
    local function health(sb)
      sandbox = sb
      require("kin").setup({ spawn = fake.spawn, log_file = false, cmd = { "sh", "serve" } })
      vim.cmd("checkhealth kin")
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      require("kin.service").stop()
      return text
    end
    t.contains(health({ mode = "auto", mechanism = "bubblewrap", confined = true }), "OK commands run confined (bubblewrap)")
    local text = health({ mode = "auto", confined = false, reason = "bubblewrap (bwrap) is not installed", hint = "install bubblewrap (apt-get install bubblewrap)" })
    t.contains(text, "WARNING commands run unconfined: bubblewrap (bwrap) is not installed")
    t.contains(text, "install bubblewrap (apt-get install bubblewrap)")
    t.contains(health({ mode = "required", confined = false, reason = "bubblewrap (bwrap) is not installed" }),
      "ERROR commands will not run: settings.json requires a sandbox, and bubblewrap (bwrap) is not installed")
  end)

  it("reports a model service that does not answer as an error, though it is configured", function()
    local url, stop = t.http_server(200)
    stop() -- nothing listens there any more
    local fake = fake_kin.new({ handlers = { initialize = function()
      return { protocolVersion = "1", serverInfo = { name = "kin", version = "x" }, model = { configured = true, model = "m", baseUrl = url } }
    end } })
    require("kin").setup({ spawn = fake.spawn, log_file = false, cmd = { "sh", "serve" } })
    vim.cmd("checkhealth kin")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    t.contains(text, "OK configured: model m")
    t.contains(text, "ERROR the model service at " .. url .. " does not answer: cannot connect to 127.0.0.1")
  end)

  it("reports a model service address that answers HTTP 404 as an error, not as answering", function()
    local url, stop = t.http_server(404)
    local fake = fake_kin.new({ handlers = { initialize = function()
      return { protocolVersion = "1", serverInfo = { name = "kin", version = "x" }, model = { configured = true, model = "m", baseUrl = url } }
    end } })
    require("kin").setup({ spawn = fake.spawn, log_file = false, cmd = { "sh", "serve" } })
    vim.cmd("checkhealth kin")
    stop()
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    t.contains(text, "ERROR the model service at " .. url .. " does not answer: answered HTTP 404: there is no model service at " .. url .. "/models")
    t.not_contains(text, "answers (answered")
    -- A 401 (no key sent) is a service that is there.
    local health = require("kin.health")
    t.eq(true, (health.judge(401, url)))
    t.eq(false, (health.judge(503, url)))
  end)

  it("reports a missing model configuration as an error, naming what to set", function()
    local fake = fake_kin.new({ handlers = { initialize = function()
      return { protocolVersion = "1", serverInfo = { name = "kin", version = "x" }, model = { configured = false, model = "gpt-5.1", missing = "set OPENAI_API_KEY" } }
    end } })
    require("kin").setup({ spawn = fake.spawn, log_file = false, cmd = { "sh", "serve" } })
    vim.cmd("checkhealth kin")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    t.contains(text, "ERROR the model service is not configured: set OPENAI_API_KEY")
  end)
end)
