-- kin.nvim's build step: the help tags (doc/tags, so :help kin opens kin's help) and the kin
-- binary, built from this repository into bin/kin, where the plugin looks first (|kin-option-cmd|).
-- Building kin needs Go (https://go.dev/dl); the help tags are made first, whatever happens after.
-- The plugin builds kin by itself at its first start when there is none (kin.build), so this step
-- is optional; it is the same build, run now.
--
--   lazy.nvim:  build = function(plugin) dofile(plugin.dir .. "/build.lua") end
--   by hand:    nvim -l editors/nvim/build.lua [--no-kin]
--   in Neovim:  :KinBuild (in the background)
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
local args = _G.arg or {}
local skip_kin = vim.tbl_contains(args, "--no-kin") or vim.env.KIN_NVIM_BUILD_KIN == "0"

-- lazy.nvim runs builds in a coroutine and shows what they yield; run by hand, it is printed.
local function say(msg)
  if coroutine.running() then
    pcall(coroutine.yield, msg)
  else
    io.stdout:write(msg .. "\n")
  end
end

vim.cmd("helptags " .. vim.fn.fnameescape(here .. "/doc"))
say("kin.nvim: help tags written to " .. here .. "/doc/tags")

if skip_kin then
  return
end
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. package.path
local build = require("kin.build")
if not build.repo() then
  error("kin.nvim: " .. vim.fs.dirname(vim.fs.dirname(here)) .. " is not the kin repository (no cmd/kin): install kin yourself and set cmd")
end
if vim.fn.executable("go") == 0 then
  error("kin.nvim: building kin needs Go (https://go.dev/dl), or install kin yourself and set cmd")
end
local result
build.start(function(ok, err)
  result = { ok = ok, err = err }
end, true)
-- Progress as it goes: lazy.nvim shows what a build yields and resumes it later (Neovim is not
-- blocked); by hand, Neovim waits here, printing it.
local shown
while not result do
  local p = build.progress()
  if not (coroutine.running() and pcall(coroutine.yield, p)) then
    if p and p ~= shown then
      io.stdout:write(p .. "\n")
      shown = p
    end
    vim.wait(200, function()
      return result ~= nil
    end)
  end
end
if not result.ok then
  if coroutine.running() then
    error("kin.nvim: " .. tostring(result.err)) -- lazy.nvim shows it
  end
  io.stderr:write("kin.nvim: " .. tostring(result.err) .. "\n")
  os.exit(1)
end
say("kin.nvim: built " .. build.exe())
