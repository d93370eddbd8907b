-- A resource template's variables filled in (rpc/PROTOCOL.md "completion/complete"): picked in
-- the `@` completion or named to :KinResource, each variable is asked for in order, completed
-- by kin's completion/complete with the earlier choices, and the expanded URI is used as a
-- listed resource's. Against an in-process fake kin.
local t = require("harness")
local fake_kin = require("fake_kin")

local TEMPLATE = "notes://{project}/{note}"

local LISTED = {
  servers = {
    {
      server = "notes",
      resources = { { uri = "notes://kin/design", name = "design" } },
      resourceTemplates = { { uriTemplate = TEMPLATE, name = "note", title = "A project's note" } },
    },
  },
}

-- completion/complete as a server would answer: the values of the argument that start with
-- what is typed; notes depend on the project chosen before.
local function complete_handler(p)
  if p.server ~= "notes" then
    return nil, { code = -32013, message = ("no such connected MCP server with resources: %q"):format(p.server) }
  end
  local all
  if p.argument.name == "project" then
    all = { "kin", "kinder", "other" }
  else
    local project = p.context and p.context.arguments and p.context.arguments.project
    all = project == "kin" and { "design", "decisions", "plan" } or { "readme" }
  end
  local values = {}
  for _, v in ipairs(all) do
    if v:sub(1, #p.argument.value) == p.argument.value then
      values[#values + 1] = v
    end
  end
  return { completion = { values = values, total = #values } }
end

local function setup(handlers)
  local fake = fake_kin.new({ handlers = vim.tbl_extend("force", {
    ["mcp/resources"] = function()
      return LISTED
    end,
    ["completion/complete"] = complete_handler,
  }, handlers or {}) })
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  fake_kin.wait_ready()
  local res = require("kin.resources")
  res.fetch()
  t.wait_for(function()
    return res.state.items ~= nil
  end, "mcp/resources")
  return fake
end

-- An answer that first asks for the candidates of `typed` (as <Tab> in the input would), keeps
-- them in offered, then answers `answer`.
local function typing(typed, answer, offered)
  return function(opts)
    offered[#offered + 1] = vim.fn.getcompletion(typed, opts.completion)
    return answer
  end
end

-- A buffer with the input's completion, where the template's `@` entry is picked as a person
-- picks it: typed, completed (<C-x><C-o>), the candidate chosen (<C-n>) and accepted (<C-y>).
local function picked(line_before)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_set_current_buf(buf)
  require("kin.complete").attach(buf, false)
  local keys = "A" .. (line_before or "") .. "@notes:notes://{<C-x><C-o><C-n><C-y>"
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  return buf
end

local function line_becomes(buf, want)
  t.wait_for(function()
    return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == want
  end, "the line " .. want)
end

describe("resource templates", function()
  it("picked in @ completion: asks each variable in order, completes with earlier choices, inserts the mention", function()
    local fake = setup()
    local offered = {}
    t.script_input({ typing("k", "kin", offered), typing("d", "design doc/ü?", offered) })
    local buf = picked("see ")
    line_becomes(buf, "see @notes:notes://kin/design%20doc%2F%C3%BC%3F")
    -- The questions, in the template's order, each naming the template and the variable.
    t.eq(2, #t.inputs)
    t.contains(t.inputs[1].prompt, "notes:" .. TEMPLATE)
    t.contains(t.inputs[1].prompt, "project")
    t.contains(t.inputs[2].prompt, "notes:" .. TEMPLATE)
    t.contains(t.inputs[2].prompt, "note: ")
    -- What kin was asked: the template as the ref, what was typed, the choices made before.
    local asked = fake:sent_params("completion/complete")
    t.eq(2, #asked)
    t.eq({ server = "notes", ref = { type = "ref/resource", uri = TEMPLATE }, argument = { name = "project", value = "k" } },
      { server = asked[1].server, ref = asked[1].ref, argument = asked[1].argument })
    t.eq(nil, next(asked[1].context.arguments), "nothing chosen before the first")
    t.eq({ server = "notes", ref = { type = "ref/resource", uri = TEMPLATE }, argument = { name = "note", value = "d" },
      context = { arguments = { project = "kin" } } }, asked[2])
    -- The candidates offered are kin's answer, as given.
    t.eq({ { "kin", "kinder" }, { "design", "decisions" } }, offered)
    -- The filled URI attaches as a listed resource does; the cursor is at its end (on its last
    -- character, as insert mode has ended).
    t.eq({ 1, #"see @notes:notes://kin/design%20doc%2F%C3%BC%3F" - 1 }, vim.api.nvim_win_get_cursor(0))
    local input = require("kin.context").input(vim.api.nvim_get_current_line())
    t.eq({ type = "resource", server = "notes", uri = "notes://kin/design%20doc%2F%C3%BC%3F" }, input[2])
  end)

  it("what is typed after the picked template (the space that ended the completion) stays after the mention", function()
    setup()
    t.script_input({ "kin", "plan" })
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_set_current_buf(buf)
    require("kin.complete").attach(buf, false)
    local keys = "A@notes:notes://{<C-x><C-o><C-n> now"
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
    line_becomes(buf, "@notes:notes://kin/plan now")
    t.eq(2, #t.inputs)
  end)

  it("a cancelled or empty answer asks no more and leaves no mention; the template attaches nothing", function()
    setup()
    t.script_input({ "kin", false })
    local buf = picked("a ")
    line_becomes(buf, "a ")
    t.eq(2, #t.inputs, "the second question was cancelled")
    t.eq("a ", require("kin.context").input("a "), "nothing attached")
    t.script_input({ "" })
    buf = picked()
    line_becomes(buf, "")
    t.eq(1, #t.inputs, "an empty first answer ends it")
    -- An unfilled template mention is no resource part.
    t.eq(nil, require("kin.resources").part("notes:" .. TEMPLATE))
  end)

  it("a completion picked that is no template asks nothing", function()
    setup()
    t.script_input({})
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_set_current_buf(buf)
    require("kin.complete").attach(buf, false)
    local keys = "A@notes:notes://kin/d<C-x><C-o><C-n><C-y>"
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
    vim.wait(50)
    t.eq(0, #t.inputs)
    t.eq({ "@notes:notes://kin/design" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  end)

  it("free text goes when kin offers nothing: a server not connected (-32013)", function()
    local fake = setup({
      ["completion/complete"] = function(p)
        return nil, { code = -32013, message = ("no such connected MCP server with resources: %q"):format(p.server) }
      end,
    })
    local offered = {}
    t.script_input({ typing("x", "x y", offered), typing("", "z", offered) })
    local buf = picked()
    line_becomes(buf, "@notes:notes://x%20y/z")
    t.eq({ {}, {} }, offered, "nothing offered")
    t.eq(2, #fake:sent("completion/complete"), "kin was asked each time")
  end)

  it(":KinResource with a template asks its variables, then opens the filled URI", function()
    local fake = setup({
      ["mcp/readResource"] = function(p)
        return { server = p.server, uri = p.uri, text = "note" }
      end,
    })
    local res = require("kin.resources")
    t.ok(vim.tbl_contains(res.complete_command("", "KinResource notes "), TEMPLATE), "the template is completed")
    t.script_input({ "kin", "plan" })
    vim.cmd("KinResource notes " .. TEMPLATE)
    t.wait_for(function()
      return #fake:sent("mcp/readResource") > 0
    end, "mcp/readResource")
    t.eq({ server = "notes", uri = "notes://kin/plan" }, fake:sent_params("mcp/readResource")[1])
    -- Cancelled: nothing is read.
    t.script_input({ false })
    vim.cmd("KinResource notes " .. TEMPLATE)
    t.wait_for(function()
      return #t.inputs == 1 and res.asking == nil
    end, "the question dismissed")
    vim.wait(50)
    t.eq(1, #fake:sent("mcp/readResource"))
  end)

  it("typed in a second Neovim with its own vim.ui.input: <Tab> offers kin's values, insert mode goes on", function()
    local embedded = require("embedded")
    local ws = vim.fn.tempname() .. "-ws"
    vim.fn.mkdir(ws, "p")
    local e = embedded.start({ cwd = ws, setup = { log_file = false } })
    local ok, err = pcall(function()
      -- The fake kin runs inside it, answering as the one here does.
      e:lua([[
        local listed = vim.json.decode(...)
        local fake_kin = require("fake_kin")
        _G.fake = fake_kin.new({ handlers = {
          ["mcp/resources"] = function() return listed end,
          ["completion/complete"] = function(p)
            local all = p.argument.name == "project" and { "kin", "kinder" } or { "design", "decisions" }
            local values = {}
            for _, v in ipairs(all) do
              if v:sub(1, #p.argument.value) == p.argument.value then values[#values + 1] = v end
            end
            return { completion = { values = values } }
          end,
        } })
        require("kin").setup({ spawn = _G.fake.spawn, log_file = false })
        require("kin.service").with_client(function()
          require("kin.resources").fetch()
        end)
      ]], vim.json.encode(LISTED))
      e:wait([[return require("kin.resources").state.items ~= nil]], "mcp/resources")
      e:lua([[vim.cmd("KinChat"); vim.api.nvim_set_current_win(require("kin.chat").state.input_win)]])
      -- The second candidate: the template (the listed resource comes first).
      for _, k in ipairs({ "i", "@", "n", "o", "t", "e", "s", ":", "<C-x><C-o>", "<C-n>", "<C-n>", "<C-y>" }) do
        e:input(k)
        e:lua("return true")
      end
      e:wait([[return vim.fn.mode() == "c"]], "the first question")
      for _, k in ipairs({ "k", "<Tab>", "<CR>" }) do
        e:input(k)
        e:lua("return true")
      end
      e:wait([[return vim.fn.mode() == "c" and vim.fn.getcmdline() == ""]], "the second question")
      for _, k in ipairs({ "d", "<Tab>", "<Tab>", "<CR>" }) do
        e:input(k)
        e:lua("return true")
      end
      e:wait([[return vim.fn.mode() == "i" and vim.api.nvim_get_current_line():find("kin", 1, true) ~= nil]], "the mention")
      local s = e:lua([[return { line = vim.api.nvim_get_current_line(), col = vim.api.nvim_win_get_cursor(0)[2],
        asked = #_G.fake:sent("completion/complete") }]])
      t.eq("@notes:notes://kin/decisions", s.line, "the second <Tab> picked kin's second value")
      t.eq(#s.line, s.col, "typing goes on after it")
      t.eq(2, s.asked, "kin asked once per <Tab> menu")
      e:lua([[vim.api.nvim_input(" ok")]])
      t.eq("@notes:notes://kin/decisions ok", e:lua("return vim.api.nvim_get_current_line()"))
    end)
    embedded.stop_all()
    if not ok then
      error(err, 0)
    end
  end)

  it("expands RFC 6570 templates: values percent-encoded but the unreserved characters", function()
    local res = require("kin.resources")
    t.eq({ "b", "a", "c" }, res.template_vars("x://{b}/{a}{?b,c}"))
    t.eq("notes://kin/A-z_0.9~", res.expand(TEMPLATE, { project = "kin", note = "A-z_0.9~" }))
    t.eq("notes://a%2Fb/%25%20%40%3A%2C%7B%7D", res.expand(TEMPLATE, { project = "a/b", note = "% @:,{}" }))
    t.eq("notes://%C3%A9t%C3%A9/x", res.expand(TEMPLATE, { project = "été", note = "x" }))
    t.eq("file:///src/a%20b/main.go", res.expand("file:///{+path}", { path = "src/a b/main.go" }))
    t.eq("x://h/a/b?q=c%26d&lang=", res.expand("x://h{/p,r}{?q,lang}", { p = "a", r = "b", q = "c&d", lang = "" }))
    t.eq("x://abc", res.expand("x://{v:3}", { v = "abcdef" }))
    t.eq("x://a,b", res.expand("x://{a,b}", { a = "a", b = "b" }))
  end)
end)
