-- kin.nvim's build step: the help tags (doc/tags, so :help kin opens kin's help) and the kin
-- binary, built from this repository into bin/kin, where the plugin looks first (|kin-option-cmd|).
-- Building kin needs Go (https://go.dev/dl); the help tags are made first, whatever happens after.
--
--   lazy.nvim:  build = function(plugin) dofile(plugin.dir .. "/build.lua") end
--               (lazy.nvim also runs a build.lua it finds at the plugin's root by itself)
--   by hand:    nvim -l editors/nvim/build.lua [--no-kin]
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
local repo = vim.fs.dirname(vim.fs.dirname(here))
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
if vim.fn.isdirectory(repo .. "/cmd/kin") == 0 then
  error("kin.nvim: " .. repo .. " is not the kin repository (no cmd/kin): install kin yourself and set cmd")
end
if vim.fn.executable("go") == 0 then
  error("kin.nvim: building kin needs Go (https://go.dev/dl), or install kin yourself and set cmd")
end
local exe = here .. "/bin/kin" .. (vim.fn.has("win32") == 1 and ".exe" or "")
local res = vim.system({ "go", "build", "-o", exe, "./cmd/kin" }, {
  cwd = repo,
  text = true,
  env = { CGO_ENABLED = "0" },
}):wait()
if res.code ~= 0 then
  error("kin.nvim: go build ./cmd/kin failed:\n" .. (res.stderr or ""))
end
say("kin.nvim: built " .. exe)
