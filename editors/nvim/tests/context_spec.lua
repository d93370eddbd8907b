-- Context beside a question (turn/start input parts), against the in-process fake kin.
local t = require("harness")
local fake_kin = require("fake_kin")

local function setup()
  local fake = fake_kin.new()
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  return fake
end

local function workfile(name, lines)
  local dir = vim.uv.cwd()
  vim.fn.writefile(lines, dir .. "/" .. name)
  return dir .. "/" .. name
end

describe("context", function()
  local made = {}
  after_each(function()
    for _, f in ipairs(made) do
      os.remove(f)
    end
  end)

  it(":KinAttach collects parts for the next question, sent and cleared once kin takes it", function()
    local fake = setup()
    local file = workfile("kin_ctx_a.lua", { "local x = 1", "return x" })
    made[#made + 1] = file
    vim.cmd("edit " .. file)
    local buf = vim.api.nvim_get_current_buf()
    vim.diagnostic.set(vim.api.nvim_create_namespace("test"), buf, {
      { lnum = 1, col = 7, end_lnum = 1, end_col = 8, severity = vim.diagnostic.severity.WARN, message = "x is unused", source = "lint" },
    })
    vim.cmd("KinAttach file")
    vim.cmd("KinAttach diagnostics")
    vim.cmd("1KinAttach")
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    t.contains(chat.input_winbar(), "attached: file kin_ctx_a.lua · diagnostics of kin_ctx_a.lua (1) · selection kin_ctx_a.lua line 1")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "why?" })
    chat.send_input()
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    local input = fake:sent("turn/start")[1].params.input
    t.eq({ type = "text", text = "why?" }, input[1])
    t.eq({ type = "file", path = "kin_ctx_a.lua" }, input[2])
    t.eq({ type = "diagnostics", path = "kin_ctx_a.lua", items = { {
      range = { start = { line = 1, character = 7 }, ["end"] = { line = 1, character = 8 } },
      severity = "warning", message = "x is unused", source = "lint",
    } } }, input[3])
    t.eq("local x = 1", input[4].text)
    t.eq({}, require("kin.context").state.attached, "cleared once kin took the question")
  end)

  it("@file and #buffer mentions attach what they name; unknown ones are left as text", function()
    local fake = setup()
    local a = workfile("kin_ctx_b.txt", { "b" })
    made[#made + 1] = a
    vim.cmd("edit " .. a)
    vim.cmd("enew")
    vim.api.nvim_buf_set_name(0, "")
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "compare @kin_ctx_b.txt with #kin_ctx_b.txt and @nope.txt" })
    chat.send_input()
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    local input = fake:sent("turn/start")[1].params.input
    t.eq("compare @kin_ctx_b.txt with #kin_ctx_b.txt and @nope.txt", input[1].text)
    t.eq({ type = "file", path = "kin_ctx_b.txt" }, input[2])
    t.eq({ type = "file", path = "kin_ctx_b.txt" }, input[3])
    t.eq(3, #input, "nothing for @nope.txt")
  end)

  it("completes @files of the workspace and #buffers", function()
    setup()
    local a = workfile("kin_ctx_c.txt", { "c" })
    made[#made + 1] = a
    vim.cmd("edit " .. a)
    local complete = require("kin.complete")
    local files = vim.tbl_map(function(i)
      return i.word
    end, complete.omnifunc(0, "@kin_ctx_c"))
    t.eq({ "@kin_ctx_c.txt" }, files)
    local bufs = vim.tbl_map(function(i)
      return i.word
    end, complete.omnifunc(0, "#kin_ctx_c"))
    t.eq({ "#kin_ctx_c.txt" }, bufs)
    vim.cmd("KinChat")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "look at @kin" })
    vim.api.nvim_win_set_cursor(0, { 1, 12 })
    t.eq(8, complete.omnifunc(1, ""), "the mention starts at the @")
  end)

  it("edit-and-resend brings back the question's text and what it attached", function()
    local fake = setup()
    local file = workfile("kin_ctx_d.txt", { "d" })
    made[#made + 1] = file
    vim.cmd("edit " .. file)
    vim.cmd("KinAttach file")
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "see #kin_ctx_d.txt" })
    chat.send_input()
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    t.eq({}, require("kin.context").state.attached)
    vim.cmd("KinEdit")
    t.eq({ "see #kin_ctx_d.txt" }, vim.api.nvim_buf_get_lines(chat.state.input_buf, 0, -1, false))
    t.eq({ { type = "file", path = "kin_ctx_d.txt" } }, require("kin.context").state.attached, "the attachment, once (the mention is in the text)")
  end)

  it("turn/started shows what a question attached", function()
    local fake = setup()
    require("kin").ask("hi")
    t.wait_for(function()
      return #fake:sent("turn/start") == 1
    end, "turn/start")
    local sid = fake:sent("turn/start")[1].params.sessionId
    fake:notify("turn/started", { sessionId = sid, turnId = "t_1", input = "Is Save atomic?", parts = {
      { type = "file", path = "store.go", range = { start = { line = 2, character = 0 }, ["end"] = { line = 4, character = 1 } }, bytes = 80 },
    } })
    t.wait_for(function()
      return require("kin.chat").current():text_content():find("attached", 1, true)
    end, "the attachment line")
    t.contains(require("kin.chat").current():text_content(), "Is Save atomic?\n\n> attached: file store.go lines 3-5 (80 bytes)")
  end)
end)
