-- A result's resource links opened for the person to read (mcp/readResource), against an
-- in-process fake kin: <CR> on a link line of :KinSaw, and :KinResource {server} {uri}.
local t = require("harness")
local fake_kin = require("fake_kin")

local function setup(handlers)
  local fake = fake_kin.new({ handlers = handlers })
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  fake_kin.wait_ready()
  return fake
end

local DESIGN = "[resource notes://kin/design]\n# Design\n\nkin is one service."

-- An answer like kin's: the text, and cuts when something was summarised.
local function read_handler(p)
  if p.server ~= "notes" then
    return nil, { code = -32013, message = ("no such connected MCP server with resources: %q"):format(p.server) }
  end
  if p.uri == "notes://logo.png" then
    return {
      server = p.server, uri = p.uri, text = "[binary resource omitted: notes://logo.png, image/png, 3 bytes]",
      cuts = { { what = "resource", why = "binary content is summarised for the model (kind and length), never decoded", bytes = 3 } },
    }
  end
  return { server = p.server, uri = p.uri, text = DESIGN }
end

-- A finished MCP call with two links, as kin sends it (turn/toolCall with modelSaw and links).
local function finished_call(fake)
  fake:notify("turn/toolCall", {
    sessionId = "s_1", turnId = "t_1", callId = "call_r1", name = "mcp__notes__find", kind = "other", title = "Call find on notes",
    status = "completed", output = "two notes",
    modelSaw = { text = "two notes", framing = "untrusted-mcp-result", server = "notes", tool = "find" },
    links = {
      { server = "notes", uri = "notes://kin/design", name = "design", title = "Design notes", mimeType = "text/markdown" },
      { server = "notes", uri = "notes://logo.png", name = "logo", mimeType = "image/png" },
    },
  })
  t.wait_for(function()
    return require("kin.resources").state.saw.call_r1 ~= nil
  end, "the call's links kept")
end

local function resource_buf(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
end

local function wait_buf(name)
  local buf
  t.wait_for(function()
    buf = resource_buf(name)
    return buf
  end, name)
  return buf
end

local function goto_line(prefix)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if l:sub(1, #prefix) == prefix then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      return i
    end
  end
  error("no line " .. prefix)
end

describe("resource links", function()
  it("<CR> on a link of :KinSaw opens it read-only, named by server and URI, typed by its MIME type", function()
    local fake = setup({ ["mcp/readResource"] = read_handler })
    finished_call(fake)
    vim.cmd("KinSaw call_r1")
    t.eq("kin://saw/call_r1", vim.api.nvim_buf_get_name(0))
    goto_line("link: @notes:notes://kin/design")
    local saw_win = vim.api.nvim_get_current_win()
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    local buf = wait_buf("kin-resource://notes/notes://kin/design")
    t.eq({ { server = "notes", uri = "notes://kin/design" } }, fake:sent_params("mcp/readResource"))
    t.eq(buf, vim.api.nvim_get_current_buf(), "the resource is shown, in a window of its own")
    t.ok(vim.api.nvim_get_current_win() ~= saw_win, "the view of what the model saw stays")
    t.eq(vim.split(DESIGN, "\n"), vim.api.nvim_buf_get_lines(buf, 0, -1, false), "the text as kin sent it, nothing added")
    t.eq("nofile", vim.bo[buf].buftype)
    t.eq(false, vim.bo[buf].modifiable, "read-only")
    t.eq("markdown", vim.bo[buf].filetype, "text/markdown")
    -- The second link: a binary one, its cut said first; gf (the other open key) opens it too.
    vim.api.nvim_set_current_win(saw_win)
    goto_line("link: @notes:notes://logo.png")
    vim.api.nvim_feedkeys("gf", "x", false)
    local logo = wait_buf("kin-resource://notes/notes://logo.png")
    local lines = vim.api.nvim_buf_get_lines(logo, 0, -1, false)
    t.eq("# cut: resource: binary content is summarised for the model (kind and length), never decoded (3 bytes)", lines[1])
    t.eq("[binary resource omitted: notes://logo.png, image/png, 3 bytes]", lines[3])
    t.eq("", vim.bo[logo].filetype, "no filetype for an image")
    -- A line that is no link says so, and asks kin nothing.
    t.capture_notify()
    vim.api.nvim_set_current_win(saw_win)
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    t.contains(t.notes_text(), "no resource link under the cursor")
    t.eq(2, #fake:sent("mcp/readResource"))
  end)

  -- :KinSaw for a call whose view was still open failed ("Failed to rename buffer": a buffer of
  -- that name exists) and left an empty buffer behind.
  it(":KinSaw for a call already shown goes to its view", function()
    local fake = setup({ ["mcp/readResource"] = read_handler })
    finished_call(fake)
    vim.cmd("KinSaw call_r1")
    local view = vim.api.nvim_get_current_win()
    local bufs = #vim.api.nvim_list_bufs()
    vim.cmd("wincmd p")
    vim.cmd("KinSaw call_r1")
    t.eq(view, vim.api.nvim_get_current_win(), "the view shown")
    t.eq("kin://saw/call_r1", vim.api.nvim_buf_get_name(0))
    t.eq(bufs, #vim.api.nvim_list_bufs(), "no buffer left behind")
  end)

  it(":KinResource {server} {uri} opens it; opened again, the same buffer shows the server's text now", function()
    local text = "first"
    local fake = setup({
      ["mcp/readResource"] = function(p)
        return { server = p.server, uri = p.uri, text = text }
      end,
    })
    vim.cmd("KinResource notes notes://kin/config.json")
    local buf = wait_buf("kin-resource://notes/notes://kin/config.json")
    t.eq({ "first" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.eq("json", vim.bo[buf].filetype, "the filetype of the URI's file name")
    t.eq({ server = "notes", uri = "notes://kin/config.json" }, fake:sent_params("mcp/readResource")[1])
    text = "second\nline"
    vim.cmd("KinResource notes notes://kin/config.json")
    t.wait_for(function()
      return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "second"
    end, "the text again")
    t.eq(buf, resource_buf("kin-resource://notes/notes://kin/config.json"), "one buffer")
    t.eq(1, #vim.fn.win_findbuf(buf), "one window")
    t.eq(false, vim.bo[buf].modifiable)
  end)

  it("a server not connected is said in a notification naming it; no buffer is opened", function()
    local fake = setup({ ["mcp/readResource"] = read_handler })
    t.capture_notify()
    local bufs = #vim.api.nvim_list_bufs()
    vim.cmd("KinResource nope notes://kin/design")
    t.wait_for(function()
      return #(t.notes or {}) > 0
    end, "a notification")
    t.eq(1, #fake:sent("mcp/readResource"))
    t.contains(t.notes_text(), "MCP server nope")
    t.contains(t.notes_text(), "not connected, or it has no resources")
    t.eq(vim.log.levels.ERROR, t.notes[1].level)
    t.eq(bufs, #vim.api.nvim_list_bufs(), "no buffer")
  end)

  it("a link line names its link, also when its URI holds a space", function()
    local res = require("kin.resources")
    local links = {
      { server = "notes", uri = "notes://a", title = "A" },
      { server = "notes", uri = "notes://a b", title = "B", mimeType = "text/plain" },
    }
    t.eq(links[2], res.link_at(res.link_text(links[2]), links))
    t.eq(links[1], res.link_at(res.link_text(links[1]), links))
    t.eq({ server = "docs", uri = "docs://x" }, res.link_at("link: @docs:docs://x Readme", links), "a link of no call known")
    t.eq(nil, res.link_at("cut: output: too long", links))
  end)

  -- kin strips a link's URI of invisible characters but keeps its line breaks (catalog.Strip):
  -- a server's resource_link with "\n" in its URI made :KinSaw fail (a buffer line cannot hold one).
  it("a link whose URI holds a line break is one line of :KinSaw, and <CR> on it names it", function()
    local res = require("kin.resources")
    local links = { { server = "notes", uri = "notes://a\nb", title = "Two\nlines" } }
    local lines = res.saw_lines({ name = "read", callId = "c1", modelSaw = { text = "x" }, links = links })
    for _, l in ipairs(lines) do
      t.ok(not l:find("\n", 1, true), "one line: " .. vim.inspect(l))
    end
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    t.eq(links[1], res.link_at(res.link_text(links[1]), links))
  end)

  it("the filetype comes from the MIME type where it is obvious, else from the URI", function()
    local ft = require("kin.resources").filetype
    t.eq("markdown", ft("text/markdown; charset=utf-8", "notes://x"))
    t.eq("json", ft("application/vnd.api+json", "notes://x"))
    t.eq("yaml", ft("application/x-yaml", "notes://x"))
    t.eq("python", ft("text/x-python", "notes://x"))
    t.eq("text", ft("text/plain", "notes://x.lua"), "the MIME type wins")
    t.eq("lua", ft(nil, "file:///src/init.lua?rev=2"))
    t.eq("", ft("application/octet-stream", "notes://blob"))
  end)

  it(":KinResource completes the listed servers, then that server's resources", function()
    setup({
      ["mcp/resources"] = function()
        return { servers = {
          { server = "notes", resources = { { uri = "notes://kin/design", name = "design" }, { uri = "notes://kin/plan", name = "plan" } } },
          { server = "docs", resources = { { uri = "docs://readme", name = "readme" } } },
        } }
      end,
    })
    local res = require("kin.resources")
    res.fetch()
    t.wait_for(function()
      return res.state.items ~= nil
    end, "mcp/resources")
    t.eq({ "docs", "notes" }, res.complete_command("", "KinResource "))
    t.eq({ "notes" }, res.complete_command("no", "KinResource no"))
    t.eq({ "notes://kin/design", "notes://kin/plan" }, res.complete_command("", "KinResource notes "))
    t.eq({ "notes://kin/plan" }, res.complete_command("notes://kin/p", "KinResource notes notes://kin/p"))
  end)
end)
