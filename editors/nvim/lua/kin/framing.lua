-- LSP base-protocol framing: `Content-Length: N\r\n\r\n` followed by N bytes of JSON.
-- Pure string handling, no I/O: the client feeds it whatever chunks the pipe delivers.
local M = {}

--- Frames one message body.
---@param body string
---@return string
function M.encode(body)
  return ("Content-Length: %d\r\n\r\n%s"):format(#body, body)
end

---@class kin.Decoder
---@field private buf string
local Decoder = {}
Decoder.__index = Decoder

--- A decoder keeps partial frames between chunks.
---@return kin.Decoder
function M.decoder()
  return setmetatable({ buf = "" }, Decoder)
end

--- Feeds a chunk; returns the complete bodies it finished (zero or more) and an error string
--- for a header it cannot read (that header is skipped so later frames still decode).
---@param chunk string
---@return string[] bodies, string? err
function Decoder:feed(chunk)
  self.buf = self.buf .. chunk
  local bodies, err = {}, nil
  while true do
    local header_end = self.buf:find("\r\n\r\n", 1, true)
    if not header_end then
      break
    end
    local header = self.buf:sub(1, header_end - 1)
    local length
    for line in (header .. "\r\n"):gmatch("(.-)\r\n") do
      local name, value = line:match("^%s*([^:]+):%s*(.-)%s*$")
      if name and name:lower() == "content-length" then
        length = tonumber(value)
      end
    end
    if not length then
      err = "frame header without Content-Length: " .. header:sub(1, 80)
      self.buf = self.buf:sub(header_end + 4)
    else
      local body_start = header_end + 4
      if #self.buf < body_start + length - 1 then
        break
      end
      bodies[#bodies + 1] = self.buf:sub(body_start, body_start + length - 1)
      self.buf = self.buf:sub(body_start + length)
    end
  end
  return bodies, err
end

--- Bytes held back waiting for the rest of a frame.
function Decoder:pending()
  return #self.buf
end

return M
