-- Worktrees in kin.nvim against the fake service answering with kin's golden frames:
-- :KinNew --worktree[=BRANCH], :KinWorktree status/apply/remove[!], refusals with their paths in
-- the quickfix list.
local t = require("harness")
local fake_kin = require("fake_kin")

local root = vim.env.KIN_TEST_ROOT or vim.fn.getcwd()
local golden_dir = vim.fs.normalize(root .. "/../../rpc/testdata/golden")

local function frames(method)
  local f = assert(io.open(golden_dir .. "/" .. method:gsub("/", "_") .. ".json", "r"))
  local doc = vim.json.decode(f:read("*a"), { luanil = { object = true, array = true } })
  f:close()
  return doc.frames
end

-- The responses (results and errors) of a method's golden frames, in order.
local function answers(method)
  local out = {}
  for _, fr in ipairs(frames(method)) do
    if fr.method == nil then
      out[#out + 1] = fr
    end
  end
  return out
end

local function worktree_session()
  for _, fr in ipairs(answers("session/new")) do
    if fr.result and fr.result.session.worktree then
      return fr.result
    end
  end
end

describe("worktrees", function()
  it("parses :KinNew's --worktree", function()
    local wt = require("kin.worktree")
    local title, w = wt.parse_new("--worktree fix the test")
    t.eq("fix the test", title)
    t.eq(true, w)
    title, w = wt.parse_new("atomic --worktree=fix/atomic saves")
    t.eq("atomic saves", title)
    t.eq({ branch = "fix/atomic" }, w)
    title, w = wt.parse_new("")
    t.eq(nil, title)
    t.eq(nil, w)
  end)

  it("new session, status, a conflict, apply, a refused remove, a forced one", function()
    local new, status = worktree_session(), answers("worktree/status")[1].result
    local apply, remove = answers("worktree/apply"), answers("worktree/remove")
    t.ok(new and status and #apply == 2 and #remove == 2, "golden frames")
    local n_apply, n_remove = 0, 0
    local fake = fake_kin.new({ handlers = {
      ["session/new"] = function()
        return new
      end,
      ["worktree/status"] = function()
        return status
      end,
      ["worktree/apply"] = function()
        n_apply = n_apply + 1
        return apply[n_apply].result, apply[n_apply].error
      end,
      ["worktree/remove"] = function()
        n_remove = n_remove + 1
        return remove[n_remove].result, remove[n_remove].error
      end,
    } })
    require("kin").setup({ spawn = fake.spawn, log_file = false })
    t.capture_notify()
    vim.cmd("KinNew --worktree=fix/atomic atomic saves")
    t.wait_for(function()
      return #fake:sent_params("session/new") == 1 and require("kin.chat").state.current == new.session.sessionId
    end, "session/new")
    local p = fake:sent_params("session/new")[1]
    t.eq({ branch = "fix/atomic" }, p.worktree)
    t.eq("atomic saves", p.title)
    t.wait_for(function()
      return t.notes_text():find(new.session.worktree.branch, 1, true) ~= nil
    end, "the worktree is said")

    vim.cmd("KinWorktree")
    t.wait_for(function()
      return #vim.fn.getqflist() == #status.files
    end, "changed files in the quickfix list")
    t.contains(vim.fn.bufname(vim.fn.getqflist()[1].bufnr), status.path, "quickfix paths are in the worktree")
    t.contains(t.notes_text(), "not applied", "status")

    vim.cmd("KinWorktree apply")
    t.wait_for(function()
      return t.notes_text():find("nothing was changed", 1, true) ~= nil
    end, "the conflict")
    local qf = vim.fn.getqflist()
    t.eq(#apply[1].error.data.paths, #qf, "conflicting paths")
    t.contains(vim.fn.bufname(qf[1].bufnr), new.session.worktree.repo .. "/" .. apply[1].error.data.paths[1], "in the checkout")

    vim.cmd("KinWorktree apply")
    t.wait_for(function()
      return t.notes_text():find("applied " .. #apply[2].result.files .. " files", 1, true) ~= nil
    end, "applied")

    vim.cmd("KinWorktree remove")
    t.wait_for(function()
      return t.notes_text():find(":KinWorktree remove! drops them", 1, true) ~= nil
    end, "remove refused")
    vim.cmd("KinWorktree! remove")
    t.wait_for(function()
      return t.notes_text():find("removed the worktree and its branch " .. remove[2].result.branch, 1, true) ~= nil
    end, "removed")
    local rp = fake:sent_params("worktree/remove")
    t.eq(nil, rp[1].force)
    t.eq(true, rp[2].force)
  end)
end)
