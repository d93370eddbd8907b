-- A first install with no kin anywhere (lazy.nvim runs no `build` for a `dir` spec): the first
-- start builds kin from this repository with the real `go build`, in the background, showing
-- its progress, and what was asked meanwhile waits for it; :checkhealth says what to run.
local t = require("harness")
local kin = require("realkin")
kin.need_kin()

local env = {}
local build

-- PATH without the folders that hold a program (kin built by run.sh, or go).
local function path_without(program)
  local dirs = {}
  for d in vim.env.PATH:gmatch("[^:]+") do
    if vim.fn.executable(d .. "/" .. program) == 0 then
      dirs[#dirs + 1] = d
    end
  end
  return table.concat(dirs, ":")
end

before_each(function()
  kin.fresh(env)
  vim.env.PATH = path_without("kin")
  build = require("kin.build")
  -- The plugin as a fresh clone has it: no bin/kin yet (built into a folder of this case).
  build.paths = { exe = vim.fn.tempname() .. "-plugin/bin/kin" }
  require("kin").setup({ env = { KIN_HOME = env.home }, log_file = env.home .. "/kin.log" })
end)

local function health()
  vim.cmd("checkhealth kin")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  if #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd("tabclose")
  else
    vim.cmd("bwipeout!")
  end
  return text
end

describe("a first install", function()
  it("the first start builds kin in the background with progress; the question asked waits and is answered", function()
    t.eq(true, (build.needed()), "no kin anywhere")
    local before = health()
    t.contains(before, "ERROR kin is not built yet")
    t.contains(before, "Run :KinBuild (in a shell: " .. build.shell_step() .. ")")
    t.not_contains(before, "go install")
    t.ok(not build.running(), ":checkhealth starts nothing")

    vim.cmd("KinChat hello from a fresh install")
    -- :KinChat came back at once: Neovim is not blocked, the build goes on in the background.
    t.ok(build.running(), "building in the background")
    t.ok(not require("kin.service").is_running(), "kin waits for its build")
    t.contains(kin.winbar(), "building kin (go build)")
    t.wait_for(function()
      return kin.text():find("Hello from the mock.", 1, true) and kin.turn_over()
    end, "the question, answered once kin is built", 400000)
    t.ok(not build.running())
    t.eq(1, vim.fn.executable(build.exe()), "kin is in the plugin's bin/")
    t.eq(build.exe(), require("kin.service").command()[1], "the built kin is the one that runs")
    t.contains(kin.text(), "## You\n\nhello from a fresh install")
    t.not_contains(kin.winbar(), "building")
    t.contains(health(), "OK found " .. build.exe())
  end)

  it("without Go, it says what to do, and the question stays in the input", function()
    vim.env.PATH = path_without("go")
    local need, cannot = build.needed()
    t.eq(true, need)
    t.contains(cannot, "building kin needs Go (https://go.dev/dl)")
    t.capture_notify()
    vim.cmd("KinChat")
    local chat = require("kin.chat")
    vim.api.nvim_buf_set_lines(chat.state.input_buf, 0, -1, false, { "hello without go" })
    chat.send_input()
    t.wait_for(function()
      return t.notes_text():find("needs Go", 1, true)
    end, "the reason")
    t.contains(t.notes_text(), ":KinBuild")
    t.eq({ "hello without go" }, vim.api.nvim_buf_get_lines(chat.state.input_buf, 0, -1, false))
    t.ok(not build.running())
    t.contains(health(), "ERROR building kin needs Go")
  end)
end)
