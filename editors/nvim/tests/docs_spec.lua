local t = require("harness")

local root = vim.env.KIN_TEST_ROOT

describe("doc/kin.txt", function()
  it("has valid help tags for every command and option", function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. "/doc", "p")
    vim.fn.writefile(vim.fn.readfile(root .. "/doc/kin.txt"), dir .. "/doc/kin.txt")
    vim.cmd("helptags " .. vim.fn.fnameescape(dir .. "/doc")) -- errors on a duplicate tag
    local tags = {}
    for _, line in ipairs(vim.fn.readfile(dir .. "/doc/tags")) do
      tags[line:match("^[^\t]+")] = true
    end
    for name, c in pairs(vim.api.nvim_get_commands({})) do
      if name:match("^Kin") then
        t.ok(tags[":" .. name], "no help tag for :" .. name)
        t.ok(c.definition ~= "", name)
      end
    end
    for name in pairs(require("kin.config").defaults) do
      t.ok(tags["kin-option-" .. name], "no help tag for option " .. name)
    end
    -- every |link| points to a tag (ours or Neovim's)
    vim.opt.rtp:prepend(dir)
    local text = table.concat(vim.fn.readfile(dir .. "/doc/kin.txt"), "\n")
    for link in text:gmatch("|([^|%s]+)|") do
      t.ok(tags[link] or #vim.fn.taglist("^" .. vim.pesc(link) .. "$") > 0 or pcall(vim.cmd, "help " .. link), "dangling link |" .. link .. "|")
    end
  end)
end)
