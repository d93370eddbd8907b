local t = require("harness")
local framing = require("kin.framing")

describe("framing", function()
  it("encodes Content-Length in bytes", function()
    t.eq("Content-Length: 10\r\n\r\n{\"a\":\"é\"}", framing.encode('{"a":"é"}'))
  end)

  it("decodes a frame fed byte by byte", function()
    local d = framing.decoder()
    local data = framing.encode('{"x":"ünï"}')
    local got = {}
    for i = 1, #data do
      vim.list_extend(got, (d:feed(data:sub(i, i))))
    end
    t.eq({ '{"x":"ünï"}' }, got)
    t.eq(0, d:pending())
  end)

  it("decodes several frames in one chunk and keeps the partial rest", function()
    local d = framing.decoder()
    local data = framing.encode("[1]") .. framing.encode("[2]") .. framing.encode("[3]")
    local got = d:feed(data .. "Content-Length: 5\r\n\r\n[4")
    t.eq({ "[1]", "[2]", "[3]" }, got)
    t.eq({ "[4,5]" }, (d:feed(",5]")))
  end)

  it("accepts other headers and any case", function()
    local d = framing.decoder()
    local got = d:feed("content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}")
    t.eq({ "{}" }, got)
  end)

  it("reports a header without Content-Length and goes on", function()
    local d = framing.decoder()
    local got, err = d:feed("X-Nope: 1\r\n\r\n" .. framing.encode("[]"))
    t.ok(err and err:find("Content%-Length"), "an error names the header")
    t.eq({ "[]" }, got)
  end)
end)
