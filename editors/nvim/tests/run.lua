-- Test runner: nvim --headless -u NONE -l tests/run.lua [tests/x_spec.lua ...]
-- Every case of every tests/*_spec.lua runs in a fresh child Neovim (tests/child.lua), so no
-- state leaks between cases. Prints one line per case and a final "N passed, M failed".
local ok_all, err_all = pcall(function()
  local this = debug.getinfo(1, "S").source:sub(2)
  local tests_dir = vim.fs.dirname(vim.fn.fnamemodify(this, ":p"))
  local root = vim.fs.dirname(tests_dir)

  -- The Neovim to start children with: $KIN_TEST_NVIM, else the wrapper of .ci/install-nvim.sh
  -- when this one runs through it (v:progpath is then trixie's loader), else v:progpath.
  local function child_nvim()
    if vim.env.KIN_TEST_NVIM and vim.env.KIN_TEST_NVIM ~= "" then
      return vim.env.KIN_TEST_NVIM
    end
    local dir = (vim.env.VIMRUNTIME or ""):match("^(.*)/root/usr/share/nvim/runtime/?$")
    if dir and vim.fn.executable(dir .. "/bin/nvim") == 1 then
      return dir .. "/bin/nvim"
    end
    return vim.v.progpath
  end
  local nvim = child_nvim()

  local specs = {}
  local args = _G.arg or {}
  for i = 1, #args do
    specs[#specs + 1] = vim.fn.fnamemodify(args[i], ":p")
  end
  if #specs == 0 then
    specs = vim.fn.glob(tests_dir .. "/*_spec.lua", false, true)
    table.sort(specs)
  end
  local filter = vim.env.KIN_TEST_FILTER

  -- Listing runs the spec as a script (-l); a case runs once Neovim has started (-c), so it has
  -- a screen grid (screenstring() sees what a person would) and a real main loop.
  local function run_child(spec, index, timeout)
    local cmd = { nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n" }
    local env = { KIN_TEST_ROOT = root, KIN_TEST_SPEC = spec, KIN_TEST_INDEX = index and tostring(index) or "" }
    if index then
      vim.list_extend(cmd, { "-c", "luafile " .. vim.fn.fnameescape(tests_dir .. "/child.lua") })
    else
      vim.list_extend(cmd, { "-l", tests_dir .. "/child.lua", spec })
    end
    local res = vim.system(cmd, { text = true, cwd = root, env = env }):wait(timeout)
    return res
  end

  local passed, failed, skipped = 0, 0, 0
  local started = vim.uv.hrtime()
  local out = io.stdout
  for _, spec in ipairs(specs) do
    local name = vim.fn.fnamemodify(spec, ":t")
    local list = run_child(spec, nil, 30000)
    local cases = {}
    for line in (list.stdout or ""):gmatch("[^\n]+") do
      local i, case = line:match("^KINTEST case (%d+) (.*)$")
      if i then
        cases[#cases + 1] = { index = tonumber(i), name = case }
      end
      local why = line:match("^KINTEST skipall (.*)$")
      if why then
        cases.skip = why
      end
    end
    if list.code ~= 0 then
      failed = failed + 1
      out:write(("FAIL %s: cannot load (exit %s)\n%s%s\n"):format(name, tostring(list.code), list.stdout or "", list.stderr or ""))
    elseif cases.skip then
      skipped = skipped + #cases
      out:write(("SKIP %s (%d cases): %s\n"):format(name, #cases, cases.skip))
    else
      for _, c in ipairs(cases) do
        if filter and not (name .. " " .. c.name):find(filter, 1, true) then
          goto continue
        end
        do
          local t0 = vim.uv.hrtime()
          -- Only a guard against a case that hangs: the heaviest cases (6,000 subagent pieces,
          -- 80,000 streamed ones) take seconds to a minute on a quiet machine's clock and took
          -- up to 257 s at load 30.
          local res = run_child(spec, c.index, 600000)
          local ms = (vim.uv.hrtime() - t0) / 1e6
          local stdout = res.stdout or ""
          local result = stdout:match("KINTEST (%a+) " .. vim.pesc(tostring(c.index)) .. "\n")
          if result == "ok" and res.code == 0 then
            passed = passed + 1
            out:write(("ok   %s: %s (%d ms)\n"):format(name, c.name, ms))
          elseif result == "skip" then
            skipped = skipped + 1
            out:write(("skip %s: %s: %s\n"):format(name, c.name, vim.trim((stdout:gsub("KINTEST [^\n]*\n", "")))))
          else
            failed = failed + 1
            out:write(("FAIL %s: %s (%d ms, exit %s%s)\n"):format(name, c.name, ms, tostring(res.code),
              res.signal and res.signal ~= 0 and (", signal " .. res.signal) or ""))
            out:write((stdout:gsub("KINTEST [^\n]*\n", "")))
            if res.stderr and res.stderr ~= "" then
              out:write("stderr:\n" .. res.stderr .. "\n")
            end
          end
        end
        ::continue::
      end
    end
    out:flush()
  end
  local secs = (vim.uv.hrtime() - started) / 1e9
  out:write(("took %.1f s\n"):format(secs))
  local summary = ("%d passed, %d failed"):format(passed, failed)
  if skipped > 0 then
    summary = summary .. (", %d skipped"):format(skipped)
  end
  out:write(summary .. "\n")
  out:flush()
  os.exit((failed == 0 and passed > 0) and 0 or 1)
end)
if not ok_all then
  io.stdout:write("runner error: " .. tostring(err_all) .. "\n0 passed, 1 failed\n")
  io.stdout:flush()
  os.exit(1)
end
