local t = require("harness")
local fake_kin = require("fake_kin")

local function setup(opts)
  local fake = fake_kin.new(opts)
  require("kin").setup({ spawn = fake.spawn, log_file = false, env = { KIN_X = "1" } })
  return fake
end

describe("service", function()
  it("starts lazily, once, and initializes before the first request", function()
    local fake = setup()
    t.eq(0, fake.spawned, "nothing runs before first use")
    local service = require("kin.service")
    local got = {}
    service.request("mcp/list", {}, function(r)
      got[#got + 1] = r
    end)
    service.request("mcp/list", {}, function(r)
      got[#got + 1] = r
    end)
    t.wait_for(function()
      return #got == 2
    end, "two answers")
    t.eq(1, fake.spawned)
    t.eq({ "initialize", "initialized", "mcp/list", "mcp/list" }, fake:methods())
    local init = fake:sent("initialize")[1].params
    t.eq("kin.nvim", init.clientInfo.name)
    t.eq(true, init.capabilities.approvals)
    t.eq(vim.fn.getpid(), init.processId)
    t.eq(vim.uri_from_fname(vim.uv.cwd()), init.workspaceFolders[1].uri)
    t.eq(require("kin.config").cmd(), fake.cmd, "the built kin or `kin` from PATH, with serve")
    t.eq("1", fake.sp.env.KIN_X)
  end)

  it("passes --log-file and --log-level when set", function()
    local fake = fake_kin.new()
    local log = vim.fn.tempname() .. "/kin.log"
    require("kin").setup({ spawn = fake.spawn, log_file = log, cmd = { "/x/kin", "serve" }, log_level = "debug" })
    require("kin.service").with_client(function() end)
    t.wait_for(function()
      return require("kin.service").ctx.ready
    end, "ready")
    t.eq({ "/x/kin", "serve", "--log-file", log, "--log-level", "debug" }, fake.cmd)
  end)

  it("answers a request from kin with method not found", function()
    local fake = setup()
    require("kin.service").with_client(function() end)
    t.wait_for(function()
      return require("kin.service").ctx.ready
    end, "ready")
    fake:send({ jsonrpc = "2.0", id = 99, method = "editor/doSomething", params = {} })
    t.wait_for(function()
      for _, m in ipairs(fake.received) do
        if m.id == 99 and m.error then
          return m
        end
      end
    end, "an error response to id 99")
  end)

  it("stops with shutdown then exit", function()
    local fake = setup()
    local service = require("kin.service")
    service.with_client(function() end)
    t.wait_for(function()
      return service.ctx.ready
    end, "ready")
    service.stop()
    t.eq(false, fake.alive)
    local m = fake:methods()
    t.eq({ "shutdown", "exit" }, { m[#m - 1], m[#m] })
    t.eq(nil, service.ctx.client)
  end)

  it("kills a service that never answers shutdown or exit", function()
    local killed
    local fake = setup({
      handlers = {
        shutdown = function()
          return fake_kin.DEFER
        end,
      },
    })
    require("kin").setup({ spawn = fake.spawn, log_file = false, stop_timeout = 100 })
    local service = require("kin.service")
    service.with_client(function() end)
    t.wait_for(function()
      return service.ctx.ready
    end, "ready")
    -- The fake exits on `exit` and on close; make it deaf to both.
    local proc_close = fake.sp and fake._exit
    fake._exit = function(self, code, sig)
      if sig == 15 or sig == 9 then
        killed = sig
        proc_close(self, code, sig)
      end
    end
    service.stop()
    t.eq(15, killed)
  end)

  it("reports an unexpected exit and restarts on the next use", function()
    t.capture_notify()
    local fake = setup()
    local service = require("kin.service")
    service.with_client(function() end)
    t.wait_for(function()
      return service.ctx.ready
    end, "ready")
    fake:_exit(2, 0)
    t.wait_for(function()
      return service.ctx.client == nil
    end, "client gone")
    t.contains(t.notes_text(), "kin exited (code 2)")
    local answered
    service.request("mcp/list", {}, function()
      answered = true
    end)
    t.wait_for(function()
      return answered
    end, "answer after restart")
    t.eq(2, fake.spawned)
  end)

  it("shows notices at their level and keeps mcp/status", function()
    t.capture_notify()
    local fake = setup()
    local service = require("kin.service")
    service.with_client(function() end)
    t.wait_for(function()
      return service.ctx.ready
    end, "ready")
    fake:send_many({
      { jsonrpc = "2.0", method = "notice", params = { level = "warning", message = "found .mcp.json", source = "mcp" } },
      { jsonrpc = "2.0", method = "notice", params = { level = "error", message = "broken" } },
      { jsonrpc = "2.0", method = "mcp/status", params = { server = "files", state = "connected", tools = 3 } },
    })
    t.wait_for(function()
      return service.ctx.mcp.files
    end, "mcp state")
    t.eq(vim.log.levels.WARN, t.notes[1].level)
    t.eq("found .mcp.json", t.notes[1].msg)
    t.eq(vim.log.levels.ERROR, t.notes[2].level)
    t.eq(3, service.ctx.mcp.files.tools)
  end)
end)
