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

-- A copy of the plugin as a plugin manager would install it (without the repository around it).
local function installed_copy()
  local dir = vim.fn.tempname() .. "/kin.nvim"
  vim.fn.mkdir(dir, "p")
  for _, sub in ipairs({ "doc", "lua", "plugin" }) do
    vim.fn.system({ "cp", "-r", root .. "/" .. sub, dir .. "/" .. sub })
  end
  vim.fn.system({ "cp", root .. "/build.lua", dir .. "/build.lua" })
  return dir
end

local function nvim(args)
  local cmd = { vim.env.KIN_TEST_NVIM or vim.v.progpath, "--headless", "-u", "NONE", "-i", "NONE", "-n" }
  vim.list_extend(cmd, args)
  return vim.system(cmd, { text = true }):wait(30000)
end

describe("the build step (build.lua)", function()
  it("writes the help tags, so :help kin opens kin's help", function()
    local dir = installed_copy()
    t.eq(0, vim.fn.filereadable(dir .. "/doc/tags"), "no tags before the build")
    local res = nvim({ "-l", dir .. "/build.lua", "--no-kin" })
    t.eq(0, res.code, res.stderr)
    t.contains(res.stdout, "help tags written")
    t.eq(1, vim.fn.filereadable(dir .. "/doc/tags"))
    vim.opt.rtp:prepend(dir)
    vim.cmd("help kin")
    t.eq(vim.fs.normalize(dir .. "/doc/kin.txt"), vim.fs.normalize(vim.api.nvim_buf_get_name(0)))
    vim.cmd("help :KinAnswer")
    t.contains(vim.api.nvim_get_current_line(), "*:KinAnswer*")
  end)

  it("says what it needs when it cannot build kin, after writing the tags", function()
    local dir = installed_copy() -- not inside the kin repository
    local res = nvim({ "-l", dir .. "/build.lua" })
    t.ok(res.code ~= 0, "the build fails")
    t.contains(res.stderr .. res.stdout, "is not the kin repository (no cmd/kin)")
    t.eq(1, vim.fn.filereadable(dir .. "/doc/tags"), "the tags are there anyway")
  end)

  it("the plugin runs the kin the build made (bin/kin), else kin from PATH", function()
    local dir = installed_copy()
    local script = vim.fn.tempname() .. ".lua"
    vim.fn.writefile({
      ("vim.opt.rtp:prepend(%q)"):format(dir),
      "io.stdout:write(table.concat(require('kin.config').cmd(), ' '))",
    }, script)
    local res = nvim({ "-l", script })
    t.eq("kin serve", res.stdout)
    vim.fn.mkdir(dir .. "/bin", "p")
    vim.fn.writefile({ "#!/bin/sh" }, dir .. "/bin/kin")
    vim.fn.setfperm(dir .. "/bin/kin", "rwxr-xr-x")
    res = nvim({ "-l", script })
    t.eq(dir .. "/bin/kin serve", res.stdout)
  end)
end)
