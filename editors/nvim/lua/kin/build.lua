-- Building kin from the repository the plugin lives in (`editors/nvim` of the kin repository)
-- into the plugin's bin/, where kin.config looks first. lazy.nvim never runs `build` for a `dir`
-- spec, so the first start builds it here: in the background (vim.system), with progress (the
-- chat's title bar; the notification too with a notification plugin that replaces messages),
-- while whatever needs kin waits for it. build.lua (the build step) and :KinBuild run the same.
local config = require("kin.config")

local M = {}

---@class kin.BuildState
---@field job vim.SystemObj?   the running `go build`
---@field packages integer      packages compiled so far (go build -v names each)
---@field last string?          the last package compiled
---@field waiting fun(ok: boolean, err: string?)[]  called once it ends
---@field error string?         why the last build failed
M.state = { packages = 0, waiting = {} }

--- Where the build reads and writes (a test may point them elsewhere).
M.paths = {}

--- The kin repository the plugin lives in, or nil (a copy of the plugin on its own).
function M.repo()
  local repo = M.paths.repo or vim.fs.dirname(vim.fs.dirname(config.plugin_dir))
  if vim.fn.isdirectory(repo .. "/cmd/kin") == 1 then
    return repo
  end
end

--- The kin the build makes.
function M.exe()
  return M.paths.exe or (config.plugin_dir .. "/bin/kin" .. (vim.fn.has("win32") == 1 and ".exe" or ""))
end

--- The command of a build into out.
function M.command(out)
  return { "go", "build", "-v", "-o", out, "./cmd/kin" }
end

--- The build step as a person runs it in a shell.
function M.shell_step()
  return "nvim -l " .. vim.fn.fnameescape(config.plugin_dir .. "/build.lua")
end

--- Whether kin must be built before it can start: no `cmd` was set, the build made none yet and
--- there is no `kin` on PATH. Returns need, and (need) why it cannot be built, if it cannot.
function M.needed()
  if config.options.cmd or vim.fn.executable(M.exe()) == 1 or vim.fn.executable("kin") == 1 then
    return false
  end
  if not M.repo() then
    return true, "kin.nvim is not in the kin repository (no cmd/kin beside it): install kin and set cmd"
  end
  if vim.fn.executable("go") == 0 then
    return true, "building kin needs Go (https://go.dev/dl), which is not on PATH; install it and run :KinBuild, or install kin and set cmd"
  end
  return true
end

function M.running()
  return M.state.job ~= nil
end

--- What the build is doing, for the title bar: nil when none runs.
function M.progress()
  local st = M.state
  if not st.job then
    return nil
  end
  if st.packages == 0 then
    return "building kin (go build)…"
  end
  return ("building kin (go build): %d package%s compiled, last %s"):format(st.packages, st.packages == 1 and "" or "s", st.last or "?")
end

-- Notification plugins that replace a message by id (nvim-notify's `replace`, snacks.nvim's and
-- fidget's `id`) show the progress in place; Neovim's own vim.notify would print every update
-- into the message history, so it gets the start and the end only.
local note
local function say(msg, level, update)
  local service = require("kin.service")
  if update and service.builtin_notify() then
    return
  end
  local ok, n = pcall(vim.notify, msg, level or vim.log.levels.INFO, { title = "kin", id = "kin.build", replace = note })
  if ok and type(n) == "table" then
    note = n
  end
end

local function finish(ok, err)
  local st = M.state
  st.job = nil
  st.error = (not ok) and err or nil
  local waiting = st.waiting
  st.waiting = {}
  pcall(require("kin.status").refresh)
  for _, fn in ipairs(waiting) do
    fn(ok, err)
  end
end

--- Builds kin in the background into M.exe() (through a temporary file, so a half-built kin is
--- never run); on_done(ok, err) once it ends. A build already running is joined, not repeated.
---@param on_done fun(ok: boolean, err: string?)?
---@param quiet boolean? no notifications (build.lua prints its own)
function M.start(on_done, quiet)
  local st = M.state
  if on_done then
    table.insert(st.waiting, on_done)
  end
  if st.job then
    return
  end
  local repo = M.repo()
  local _, cannot = M.needed()
  if not repo or vim.fn.executable("go") == 0 then
    cannot = cannot or (repo and "building kin needs Go (https://go.dev/dl)" or "no kin repository beside the plugin")
    return finish(false, cannot)
  end
  local exe = M.exe()
  vim.fn.mkdir(vim.fs.dirname(exe), "p")
  local tmp = exe .. ".building-" .. vim.fn.getpid()
  st.packages, st.last, st.error = 0, nil, nil
  local tail = {}
  local function on_stderr(_, data)
    if not data then
      return
    end
    vim.schedule(function()
      for line in data:gmatch("[^\n]+") do
        -- go build -v names each package as it compiles it; anything else is an error's text.
        if line:match("^[%w%.%-_]+[/%w%.%-_]*$") and not line:find(":", 1, true) then
          st.packages = st.packages + 1
          st.last = line
        else
          tail[#tail + 1] = line
          if #tail > 20 then
            table.remove(tail, 1)
          end
        end
      end
      pcall(require("kin.status").refresh)
      if not quiet then
        say("kin.nvim: " .. M.progress(), nil, true)
      end
    end)
  end
  if not quiet then
    say("kin.nvim: building kin from " .. repo .. " (go build; the first build takes a minute or more with a cold Go cache). Questions wait for it.")
  end
  local ok, job = pcall(vim.system, M.command(tmp), {
    cwd = repo,
    text = true,
    env = { CGO_ENABLED = "0" },
    stderr = on_stderr,
  }, function(res)
    vim.schedule(function()
      local built = res.code == 0 and vim.uv.fs_rename(tmp, exe)
      if res.code == 0 and not built then
        -- A file in the way that rename does not replace (Windows).
        pcall(vim.uv.fs_unlink, exe)
        built = vim.uv.fs_rename(tmp, exe)
      end
      if not built then
        pcall(vim.uv.fs_unlink, tmp)
        local why = ("go build ./cmd/kin failed (exit %d)%s"):format(res.code, #tail > 0 and (":\n" .. table.concat(tail, "\n")) or "")
        if not quiet then
          say("kin.nvim: " .. why, vim.log.levels.ERROR)
        end
        return finish(false, why)
      end
      if not quiet then
        say("kin.nvim: built " .. exe)
      end
      finish(true)
    end)
  end)
  if not ok then
    return finish(false, "cannot run go: " .. tostring(job))
  end
  st.job = job
  pcall(require("kin.status").refresh)
end

return M
