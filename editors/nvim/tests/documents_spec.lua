-- Buffers as kin sees them (PROTOCOL.md "Documents"), against the in-process fake kin: what is
-- announced, how kin's workspace/applyEdit is answered, and which buffers a didChangeFiles
-- reloads. The same with the real kin is in review_spec.lua.
local t = require("harness")
local fake_kin = require("fake_kin")

local function setup(caps, opts)
  local fake = fake_kin.new({ handlers = { initialize = function()
    return { protocolVersion = "1", serverInfo = { name = "kin", version = "x" }, model = { configured = true },
      capabilities = { textDocuments = caps or { sync = true, applyEdit = true, positionEncoding = "utf-16" } } }
  end } })
  require("kin").setup(vim.tbl_extend("force", { spawn = fake.spawn, log_file = false }, opts or {}))
  return fake
end

local start = fake_kin.wait_ready

local function file(lines)
  local path = vim.fn.tempname() .. ".txt"
  vim.fn.writefile(lines, path)
  return vim.uv.fs_realpath(path)
end

local function reply(fake, id)
  return t.wait_for(function()
    for _, m in ipairs(fake.received) do
      if m.id == id and m.method == nil then
        return m
      end
    end
  end, "the answer to request " .. id)
end

local function apply(fake, id, uri, version, edits)
  fake:send({ jsonrpc = "2.0", id = id, method = "workspace/applyEdit", params = {
    label = "Edit", edit = { documentChanges = { { textDocument = { uri = uri, version = version }, edits = edits } } },
  } })
  return reply(fake, id)
end

describe("documents", function()
  it("declares sync and applyEdit, and announces the buffers open before kin started", function()
    local path = file({ "one", "two" })
    vim.cmd("edit " .. path)
    local fake = setup()
    start()
    t.eq({ sync = true, applyEdit = true }, fake:sent("initialize")[1].params.capabilities.textDocuments)
    local open = fake:sent("textDocument/didOpen")
    t.eq(1, #open)
    t.eq(vim.uri_from_fname(path), open[1].params.textDocument.uri)
    t.eq("one\ntwo\n", open[1].params.textDocument.text)
    t.eq(vim.api.nvim_buf_get_changedtick(0), open[1].params.textDocument.version)
    -- A scratch buffer and a help-like buffer are not files.
    vim.cmd("enew")
    vim.bo.buftype = "nofile"
    t.eq(1, #fake:sent("textDocument/didOpen"))
  end)

  it("with documents.sync off, declares nothing and sends nothing", function()
    local fake = setup(nil, { documents = { sync = false } })
    start()
    vim.cmd("edit " .. file({ "x" }))
    t.eq(nil, fake:sent("initialize")[1].params.capabilities.textDocuments)
    t.eq(0, #fake:sent("textDocument/didOpen"))
  end)

  it("applies an edit at kin's version, refuses one made from an older version", function()
    local fake = setup()
    start()
    local path = file({ "package main", "", "func main() {}" })
    vim.cmd("edit " .. path)
    local buf = vim.api.nvim_get_current_buf()
    local uri = vim.uri_from_fname(path)
    local v = fake:sent("textDocument/didOpen")[1].params.textDocument.version
    local r = apply(fake, 0, uri, v, { { range = { start = { line = 2, character = 0 }, ["end"] = { line = 3, character = 0 } }, newText = "func main() { run() }\n" } })
    -- The buffer had no unsaved changes: kin's edit is saved at once (a command reads the disk).
    t.eq({ applied = true, saved = true }, r.result)
    t.eq({ "package main", "", "func main() { run() }" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.eq(false, vim.bo[buf].modified, "applied and saved")
    t.eq({ "package main", "", "func main() { run() }" }, vim.fn.readfile(path), "on disk")
    local ch = fake:sent("textDocument/didChange")
    t.ok(#ch >= 1, "the edit is reported as a change")
    -- The person types: an edit made from the version before is refused, nothing applied.
    vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "// mine" })
    local stale = ch[#ch].params.textDocument.version
    r = apply(fake, 1, uri, stale, { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } }, newText = "" } })
    t.eq(false, r.result.applied)
    t.contains(r.result.failureReason, "changed since kin read it")
    t.eq("package main", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
    -- With the person's unsaved change, kin's edit lands beside it, unsaved.
    local now = fake:sent("textDocument/didChange")
    r = apply(fake, 2, uri, now[#now].params.textDocument.version, { { range = { start = { line = 2, character = 0 }, ["end"] = { line = 3, character = 0 } }, newText = "" } })
    t.eq({ applied = true }, r.result)
    t.eq({ "package main", "// mine", "func main() { run() }" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.ok(vim.bo[buf].modified, "not saved: the person's change is theirs to save")
    t.eq({ "package main", "", "func main() { run() }" }, vim.fn.readfile(path), "the disk is untouched")
    -- Saving is not a change: the version kin knows still holds.
    vim.cmd("write")
    now = fake:sent("textDocument/didChange")
    r = apply(fake, 4, uri, now[#now].params.textDocument.version, { { range = { start = { line = 1, character = 0 }, ["end"] = { line = 2, character = 0 } }, newText = "" } })
    t.eq({ applied = true, saved = true }, r.result)
    -- A format-on-save hook does not run on kin's save: what is written is what was approved.
    vim.cmd("autocmd BufWritePre <buffer> call setline(1, 'formatted')")
    now = fake:sent("textDocument/didChange")
    r = apply(fake, 5, uri, now[#now].params.textDocument.version, { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } }, newText = "package app\n" } })
    t.eq({ applied = true, saved = true }, r.result)
    t.eq({ "package app", "func main() { run() }" }, vim.fn.readfile(path))
    -- One u takes kin's edit back; :e! now reads what kin saved.
    vim.cmd("normal! u")
    t.eq("package main", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
    vim.cmd("edit!")
    t.eq("package app", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
    -- A file that is not open is not edited here.
    r = apply(fake, 3, vim.uri_from_fname("/nope/x.go"), 1, {})
    t.eq(false, r.result.applied)
    t.contains(r.result.failureReason, "not open")
  end)

  it("reloads unmodified buffers of files kin wrote, and leaves unsaved ones alone", function()
    t.capture_notify()
    local fake = setup()
    start()
    local a, b = file({ "a1" }), file({ "b1" })
    vim.cmd("edit " .. a)
    local abuf = vim.api.nvim_get_current_buf()
    vim.cmd("edit " .. b)
    local bbuf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(bbuf, 0, -1, false, { "mine" })
    vim.fn.writefile({ "a2" }, a)
    vim.fn.writefile({ "b2" }, b)
    fake:notify("workspace/didChangeFiles", { changes = {
      { uri = vim.uri_from_fname(a), path = a, type = "changed" },
      { uri = vim.uri_from_fname(b), path = b, type = "changed" },
    } })
    t.wait_for(function()
      return vim.api.nvim_buf_get_lines(abuf, 0, 1, false)[1] == "a2"
    end, "a reloaded")
    t.eq({ "mine" }, vim.api.nvim_buf_get_lines(bbuf, 0, -1, false))
    t.contains(t.notes_text(), "has unsaved changes, so it was left as it is")
    -- The reload is reported as a whole-buffer change.
    local ch = fake:sent("textDocument/didChange")
    local full
    for _, c in ipairs(ch) do
      if c.params.textDocument.uri == vim.uri_from_fname(a) and c.params.contentChanges[1].range == nil then
        full = c.params.contentChanges[1].text
      end
    end
    t.eq("a2\n", full)
  end)

  it("every change, applied as kin applies it (UTF-16 ranges), gives what the buffer holds", function()
    local fake = setup()
    start()
    vim.cmd("edit " .. file({ "héllo 😀 wörld", "second", "third" }))
    local buf = vim.api.nvim_get_current_buf()
    local text = fake:sent("textDocument/didOpen")[1].params.textDocument.text
    -- LSP's rule: a position is (line, UTF-16 units); apply a change to a text.
    local function offset(s, pos)
      local i, line = 1, 0
      while line < pos.line do
        local nl = s:find("\n", i, true)
        if not nl then
          return #s + 1
        end
        i, line = nl + 1, line + 1
      end
      local eol = s:find("\n", i, true) or (#s + 1)
      local l = s:sub(i, eol - 1)
      local ok, b = pcall(vim.str_byteindex, l, pos.character, true)
      return i + (ok and b or #l)
    end
    local function apply(s, c)
      if not c.range then
        return c.text
      end
      local a, b = offset(s, c.range.start), offset(s, c.range["end"])
      return s:sub(1, a - 1) .. c.text .. s:sub(b)
    end
    local seen = 0
    local function check(what)
      local changes = fake:sent("textDocument/didChange")
      for i = seen + 1, #changes do
        for _, c in ipairs(changes[i].params.contentChanges) do
          text = apply(text, c)
        end
      end
      seen = #changes
      t.eq(require("kin.documents").full_text(buf), text, what)
    end
    vim.api.nvim_buf_set_text(buf, 0, 11, 0, 11, { "✓" }) -- right after "héllo 😀" (11 bytes, 8 UTF-16 units)
    check("insert after an emoji")
    vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "zweite", "Zeile 2" })
    check("replace a line with two")
    vim.cmd("normal! ggJ")
    check("join lines")
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "appended", "" })
    check("append at the end")
    vim.api.nvim_buf_set_text(buf, 0, 0, 1, 2, { "X" })
    check("a change across lines")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    check("everything deleted")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "a", "b" })
    vim.cmd("setlocal noendofline") -- as a person sets it (OptionSet)
    vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "c" })
    check("a buffer without a final newline")
  end)

  it("closes what is unloaded and announces it again when it is read back", function()
    local fake = setup()
    start()
    local path = file({ "x" })
    vim.cmd("edit " .. path)
    vim.cmd("enew")
    vim.cmd("bunload " .. vim.fn.bufnr(path))
    t.eq(1, #fake:sent("textDocument/didClose"))
    vim.cmd("edit " .. path)
    t.eq(2, #fake:sent("textDocument/didOpen"))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "y" })
    local ch = fake:sent("textDocument/didChange")
    t.eq(1, #ch, "one change, from one attachment")
  end)
end)
