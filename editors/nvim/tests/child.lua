-- One child Neovim: lists the cases of a spec (no index) or runs the one case given.
--   nvim --headless -u NONE -l tests/child.lua tests/x_spec.lua [index]
--   nvim --headless -u NONE -c "luafile tests/child.lua"   (KIN_TEST_SPEC, KIN_TEST_INDEX)
local args = _G.arg or {}
local spec = args[1] or vim.env.KIN_TEST_SPEC
local index = tonumber(args[2] or vim.env.KIN_TEST_INDEX or "")
local root = vim.env.KIN_TEST_ROOT or vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))

vim.opt.rtp:prepend(root)
vim.opt.rtp:append(root .. "/tests")
package.path = root .. "/tests/?.lua;" .. package.path
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "I"
-- Keep Neovim's own state out of the user's folders.
local state = vim.fn.tempname()
vim.env.XDG_STATE_HOME = state
vim.env.XDG_DATA_HOME = state .. "/data"
vim.env.XDG_CACHE_HOME = state .. "/cache"

vim.cmd("runtime plugin/kin.lua")

local t = require("harness")
local out = io.stdout

local ok, err = pcall(dofile, spec)
if not ok then
  out:write("error loading " .. spec .. ": " .. tostring(err) .. "\n")
  out:flush()
  os.exit(1)
end

if not index then
  if t.skip_all then
    out:write("KINTEST skipall " .. t.skip_all .. "\n")
  end
  for i, c in ipairs(t.cases) do
    out:write(("KINTEST case %d %s\n"):format(i, c.name))
  end
  out:flush()
  os.exit(0)
end

-- The case runs once startup is over, from the main loop, as a person's actions do (during
-- startup Neovim skips some autocommands, OptionSet among them).
vim.schedule(function()
  local ok_run, status = pcall(t.run, index)
  if not ok_run then
    out:write(tostring(status) .. "\n")
    status = "fail"
  end
  out:write(("KINTEST %s %d\n"):format(status, index))
  out:flush()
  vim.cmd("qa!")
end)
