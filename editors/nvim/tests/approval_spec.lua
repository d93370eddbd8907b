local t = require("harness")
local fake_kin = require("fake_kin")

local function setup()
  local fake = fake_kin.new()
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  require("kin.service").with_client(function() end)
  t.wait_for(function()
    return require("kin.service").ctx.ready
  end, "ready")
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
    grant = { key = "bash:go test", label = "Always allow `go test` commands" },
    options = OPTIONS,
  }
end

-- Captures the preview's text when the select opens.
local function select_capturing(answer, into)
  return function(items, _, labels)
    into.preview = table.concat(require("kin.approval").active.lines, "\n")
    into.labels = labels
    into.float_open = vim.api.nvim_win_is_valid(require("kin.approval").active.preview.win)
    if answer == false then
      return nil
    end
    for i, l in ipairs(labels) do
      if l == answer then
        return items[i]
      end
    end
  end
end

local function responses(fake)
  local out = {}
  for _, m in ipairs(fake:sent("approval/respond")) do
    out[#out + 1] = m.params
  end
  return out
end

describe("approvals", function()
  it("preview a bash command with its cwd and answer with the chosen option", function()
    local fake = setup()
    local seen = {}
    t.script_select({ select_capturing("Always allow `go test` commands in this session", seen) })
    fake:notify("approval/request", bash_request())
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.eq({ { requestId = "ap_3", decision = "allow_always" } }, responses(fake))
    t.contains(seen.preview, "```sh\ngo test ./...\n```")
    t.contains(seen.preview, "cwd: /home/ana/src/app")
    t.eq({ "Allow once", "Always allow `go test` commands in this session", "Always allow `go test` commands in every session", "Deny" }, seen.labels)
    t.ok(seen.float_open, "the preview float is open while asking")
    t.eq(nil, require("kin.approval").active, "preview closed")
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      t.eq("", vim.api.nvim_win_get_config(w).relative, "no float left open")
    end
  end)

  it("sends kin's option for an always-allow kept for every session", function()
    local fake = setup()
    t.script_select({ select_capturing("Always allow `go test` commands in every session", {}) })
    fake:notify("approval/request", bash_request())
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.eq({ { requestId = "ap_3", decision = "allow_always_permanent" } }, responses(fake))
  end)

  it("shows kin's options as sent, adding none, with the refusal last", function()
    local fake = setup()
    local seen = {}
    t.script_select({ select_capturing("Not now", seen) })
    fake:notify("approval/request", {
      requestId = "ap_7", sessionId = "s_1", kind = "acknowledge_unknown", tool = "bash", title = "bash may already have run",
      options = {
        { optionId = "deny", name = "Not now", kind = "reject_once" },
        { optionId = "allow_once", name = "Acknowledge and continue", kind = "allow_once" },
      },
    })
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.eq({ "Acknowledge and continue", "Not now" }, seen.labels)
    t.eq("deny", responses(fake)[1].decision)
  end)

  it("denies when the dialog is dismissed", function()
    local fake = setup()
    t.script_select({ false })
    fake:notify("approval/request", bash_request())
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.eq("deny", responses(fake)[1].decision)
  end)

  it("shows the unified diff of a file change", function()
    local fake = setup()
    local seen = {}
    t.script_select({ select_capturing("Allow once", seen) })
    fake:notify("approval/request", {
      requestId = "ap_4", sessionId = "s_1", kind = "tool_call", tool = "edit_file", toolKind = "edit", title = "Edit main.go",
      diffs = { { path = "/a/main.go", unified = "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n-func main() {}\n+func main() { run() }\n" } },
      options = OPTIONS,
    })
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.contains(seen.preview, "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n-func main() {}\n+func main() { run() }")
  end)

  it("shows server, destination, tool and arguments of an MCP call", function()
    local fake = setup()
    local seen = {}
    t.script_select({ select_capturing("Deny", seen) })
    fake:notify("approval/request", {
      requestId = "ap_5", sessionId = "s_1", kind = "tool_call", tool = "mcp__docs__query-docs", toolKind = "other",
      title = "Call query-docs on docs", server = "docs", destination = "https://mcp.example.com/mcp",
      arguments = '{\n  "query": "react hooks"\n}', warning = "Arguments are sent to this MCP server.",
      options = OPTIONS,
    })
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.contains(seen.preview, "Server:      docs")
    t.contains(seen.preview, "Destination: https://mcp.example.com/mcp")
    t.contains(seen.preview, "Tool:        mcp__docs__query-docs")
    t.contains(seen.preview, '"query": "react hooks"')
    t.contains(seen.preview, "Arguments are sent to this MCP server.")
    t.contains(t.selects[1].prompt, "[docs]")
    t.eq("deny", responses(fake)[1].decision)
  end)

  it("offers Trust server for a server launch", function()
    local fake = setup()
    local seen = {}
    t.script_select({ select_capturing("Trust server", seen) })
    fake:notify("approval/request", {
      requestId = "ap_6", kind = "server_launch", server = "files", title = "Start MCP server files", transport = "stdio",
      destination = "npx -y @modelcontextprotocol/server-filesystem /data", scope = "project",
      options = {
        { optionId = "allow_once", name = "Allow once", kind = "allow_once" },
        { optionId = "trust", name = "Trust server", kind = "allow_always" },
        { optionId = "deny", name = "Deny", kind = "reject_once" },
      },
    })
    t.wait_for(function()
      return #responses(fake) == 1
    end, "approval/respond")
    t.eq("trust", responses(fake)[1].decision)
    t.contains(seen.preview, "Destination: npx -y @modelcontextprotocol/server-filesystem /data")
  end)

  it("asks one at a time and drops a request resolved while it waits", function()
    local fake = setup()
    local release
    t.script_select({
      function(items)
        -- hold the first dialog open until the test releases it
        return items[1]
      end,
      "Deny",
    })
    local real_select = vim.ui.select
    vim.ui.select = function(items, opts, cb)
      if not release then
        release = function()
          real_select(items, opts, cb)
        end
        return
      end
      real_select(items, opts, cb)
    end
    fake:send_many({
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_1") },
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_2") },
      { jsonrpc = "2.0", method = "approval/request", params = bash_request("ap_3") },
      { jsonrpc = "2.0", method = "approval/resolved", params = { requestId = "ap_2", decision = "deny", reason = "cancelled" } },
    })
    t.wait_for(function()
      return release
    end, "first dialog")
    t.eq(1, #require("kin.prompts").state.queue, "ap_3 waits, ap_2 dropped")
    release()
    t.wait_for(function()
      return #responses(fake) == 2
    end, "two answers")
    t.eq({ { requestId = "ap_1", decision = "allow_once" }, { requestId = "ap_3", decision = "deny" } }, responses(fake))
  end)

  it("closes the preview when kin resolves the request and sends no late answer", function()
    local fake = setup()
    local held
    vim.ui.select = function(items, opts, cb)
      held = cb
    end
    fake:notify("approval/request", bash_request("ap_9"))
    t.wait_for(function()
      return held
    end, "dialog")
    local win = require("kin.approval").active.preview.win
    t.ok(vim.api.nvim_win_is_valid(win))
    fake:notify("approval/resolved", { requestId = "ap_9", decision = "deny", reason = "cancelled" })
    t.wait_for(function()
      return not vim.api.nvim_win_is_valid(win)
    end, "preview closed")
    held(nil) -- a response would be written synchronously here
    t.eq(0, #responses(fake))
  end)
end)
