local t = require("harness")
local fake_kin = require("fake_kin")

local function setup()
  local fake = fake_kin.new()
  require("kin").setup({ spawn = fake.spawn, log_file = false })
  fake_kin.wait_ready()
  return fake
end

local FORM = {
  requestId = "el_1", sessionId = "s_1", server = "everything", mode = "form", message = "Please provide your details",
  fields = {
    { name = "name", title = "Name", type = "string", required = true },
    { name = "age", title = "Age", type = "integer", minimum = 0, maximum = 150 },
    { name = "color", title = "Favourite colour", type = "enum", enum = { "red", "green" }, enumNames = { "Red", "Green" } },
    { name = "subscribe", title = "Subscribe", type = "boolean", default = false },
  },
}

local function responses(fake)
  return fake:sent_params("elicitation/respond")
end

describe("elicitation", function()
  it("asks field by field, validates numbers and accepts", function()
    t.capture_notify()
    local fake = setup()
    t.script_input({ "Ana", "old", "200", "31.5", "31" })
    t.script_select({ "Red", "Yes" })
    fake:notify("elicitation/request", FORM)
    t.wait_panel("everything asks: Please provide your details")
    t.contains(t.panel_body(), "What you answer goes to everything.")
    t.eq(0, #(t.inputs or {}), "nothing is asked before the person chooses Answer")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ requestId = "el_1", action = "accept", content = { name = "Ana", age = 31, color = "red", subscribe = true } }, responses(fake)[1])
    t.eq("Name (1/4): ", t.inputs[1].prompt, "the field's title comes first, with no repeated prefix")
    t.contains(t.inputs[2].prompt, "Age (2/4, 0–150, optional)")
    t.contains(t.notes_text(), "Age must be a number")
    t.contains(t.notes_text(), "Age must be at most 150")
    t.contains(t.notes_text(), "Age must be a whole number")
    t.eq({ "Red", "Green", "(leave empty)" }, t.selects[1].labels)
    t.eq({ "Yes", "No (default)", "(leave empty)" }, t.selects[2].labels)
    t.contains(t.selects[2].prompt, "Subscribe (4/4, optional)")
  end)

  it("declines the whole request when one field is dismissed", function()
    local fake = setup()
    t.script_input({ "Ana", "" })
    t.script_select({ false })
    fake:notify("elicitation/request", FORM)
    t.wait_panel("everything asks: Please provide your details")
    t.contains(t.panel_body(), "What you answer goes to everything.")
    t.eq(0, #(t.inputs or {}), "nothing is asked before the person chooses Answer")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ requestId = "el_1", action = "decline" }, responses(fake)[1])
  end)

  it("re-asks a required field left empty", function()
    local fake = setup()
    t.script_input({ "", "Bo", "" })
    t.script_select({ "(leave empty)", "No" })
    fake:notify("elicitation/request", FORM)
    t.wait_panel("everything asks: Please provide your details")
    t.contains(t.panel_body(), "What you answer goes to everything.")
    t.eq(0, #(t.inputs or {}), "nothing is asked before the person chooses Answer")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ name = "Bo", subscribe = false }, responses(fake)[1].content)
  end)

  it("asks a multi-select by toggling titled options, checks the count and the formats", function()
    t.capture_notify()
    local fake = setup()
    t.script_input({ "1 April", "1990-04-01" })
    -- Toggle Salmon and Trout (three chosen with the default: too many), untoggle Tuna, Done.
    t.script_select({ "[ ] Salmon", "[ ] Trout", "Done (3 chosen)", "[x] Tuna", "Done (2 chosen)" })
    fake:notify("elicitation/request", {
      requestId = "el_5", server = "everything", mode = "form", message = "Details",
      fields = {
        { name = "born", title = "Birthdate", type = "string", format = "date" },
        { name = "fish", title = "Fish", type = "multi_select", enum = { "fish-1", "fish-2", "fish-3" },
          enumNames = { "Tuna", "Salmon", "Trout" }, minItems = 1, maxItems = 2, default = { "fish-1" } },
      },
    })
    t.wait_panel("Fish (choices; Tuna / Salmon / Trout; default Tuna)")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ requestId = "el_5", action = "accept", content = { born = "1990-04-01", fish = { "fish-2", "fish-3" } } }, responses(fake)[1])
    t.contains(t.notes_text(), "Birthdate must be YYYY-MM-DD")
    t.contains(t.notes_text(), "Fish allows at most 2 choices")
    t.eq({ "[x] Tuna", "[ ] Salmon", "[ ] Trout", "Done (1 chosen)" }, t.selects[1].labels)
    t.contains(t.selects[1].prompt, "Fish (2/2, 1–2 choices, optional)")
    t.contains(t.inputs[1].prompt, "Birthdate (1/2, YYYY-MM-DD, optional)")
  end)

  it("shows the form's fields in kin's window and declines with d", function()
    local fake = setup()
    fake:notify("elicitation/request", FORM)
    t.wait_panel("It wants:")
    local body = t.panel_body()
    t.contains(body, "  - Name (text; required)")
    t.contains(body, "  - Favourite colour (one choice; Red / Green)")
    t.eq({ "  a  Answer (4 fields, asked one by one)", "  d  Decline" }, t.panel_choices())
    t.press("d")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ requestId = "el_1", action = "decline" }, responses(fake)[1])
  end)

  it("opens a URL only after consent, and says accept only when it opened", function()
    local fake = setup()
    local opened = {}
    local result = {}
    vim.ui.open = function(url)
      opened[#opened + 1] = url
      return unpack(result, 1, 2)
    end
    local req = { requestId = "el_2", server = "notion", mode = "url", purpose = "oauth", message = "Sign in to notion", url = "https://auth.example.com/authorize?client_id=x" }
    fake:notify("elicitation/request", req)
    t.wait_panel("https://auth.example.com/authorize?client_id=x")
    t.contains(t.panel_body(), "notion asks you to open an address")
    t.eq({ "  o  Open in browser", "  a  I opened it myself", "  d  Decline" }, t.panel_choices())
    t.eq({}, opened, "nothing opens before the person chooses")
    t.press("d")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "first answer")
    t.eq({ requestId = "el_2", action = "decline" }, responses(fake)[1])
    t.eq({}, opened)

    -- No opener: not accepted; the question stays, saying so.
    t.capture_notify()
    req.requestId = "el_3"
    result = { nil, "vim.ui.open: no handler found" }
    fake:notify("elicitation/request", req)
    t.wait_panel("Sign in to notion")
    t.press("o")
    t.wait_panel("It did not open: vim.ui.open: no handler found")
    t.eq(1, #responses(fake), "a failed open is not reported as accepted")
    -- An opener that fails: not accepted either.
    result = { vim.system({ "sh", "-c", "echo no browser >&2; exit 3" }, { text = true }) }
    t.press("o")
    t.wait_panel("the opener exited with code 3: no browser")
    t.eq(1, #responses(fake))
    t.contains(t.notes_text(), "cannot open https://auth.example.com/authorize?client_id=x")
    -- y copies the address; the person opens it elsewhere and says so.
    t.press("y")
    t.eq(req.url, vim.fn.getreg('"'))
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 2
    end, "second answer")
    t.eq({ requestId = "el_3", action = "accept" }, responses(fake)[2])

    -- An opener that works: accepted.
    req.requestId = "el_4"
    result = { vim.system({ "true" }) }
    fake:notify("elicitation/request", req)
    t.wait_panel("Sign in to notion")
    t.press("o")
    t.wait_for(function()
      return #responses(fake) == 3
    end, "third answer")
    t.eq({ requestId = "el_4", action = "accept" }, responses(fake)[3])
    t.eq(3, #opened)
  end)

  -- Issue 27, Neovim 6: the fields in the server's order (kin sends them so), each with its
  -- description; a titled choice's default by its title; prompts that start with the field's
  -- title, so a picker that cuts its title short still names the field.
  it("shows the fields in kin's order with their descriptions and defaults by title", function()
    local fake = setup()
    t.script_input({ "Ana" })
    t.script_select({ "Dogs", "Yes" })
    fake:notify("elicitation/request", {
      requestId = "el_7", server = "everything", mode = "form", message = "Please fill in the form",
      fields = {
        { name = "name", title = "String", description = "Your full, legal name", type = "string", required = true },
        { name = "legacyTitledEnum", title = "Pet", type = "enum", enum = { "pet-1", "pet-2" }, enumNames = { "Cats", "Dogs" }, default = "pet-1" },
        { name = "check", title = "Boolean", description = "I agree to the terms", type = "boolean", required = true },
      },
    })
    t.wait_panel("It wants:")
    local body = t.panel_body()
    local name, pet, check = body:find("String (", 1, true), body:find("Pet (", 1, true), body:find("Boolean (", 1, true)
    t.ok(name and pet and check and name < pet and pet < check, "in kin's order:\n" .. body)
    t.contains(body, "      Your full, legal name")
    t.contains(body, "      I agree to the terms")
    t.contains(body, "default Cats")
    t.not_contains(body, "pet-1")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ name = "Ana", legacyTitledEnum = "pet-2", check = true }, responses(fake)[1].content)
    t.eq("String (1/3) — Your full, legal name: ", t.inputs[1].prompt)
    t.eq({ "Cats (default)", "Dogs", "(leave empty)" }, t.selects[1].labels)
    t.eq("Boolean (3/3) — I agree to the terms: ", t.selects[2].prompt)
  end)

  -- One bad field never discards the form: kin names the fields it refuses (data.fields); only
  -- those are asked again, starting from what was typed, and the rest is sent as before.
  it("asks again only the fields kin refused, keeping the rest", function()
    t.capture_notify()
    local calls = 0
    local fake = fake_kin.new({ handlers = {
      ["elicitation/respond"] = function()
        calls = calls + 1
        if calls == 1 then
          return nil, { code = -32602, message = "invalid params: the answer does not fit the request: field \"member\" must match the pattern ^[A-Z]{3}$",
            data = { fields = { { name = "member", message = "must match the pattern ^[A-Z]{3}$" } } } }
        end
        return {}
      end,
    } })
    require("kin").setup({ spawn = fake.spawn, log_file = false })
    fake_kin.wait_ready()
    t.script_input({ "Ana", "abc", "31", "ABC" })
    fake:notify("elicitation/request", {
      requestId = "el_8", server = "club", mode = "form", message = "Join the club",
      fields = {
        { name = "name", title = "Name", type = "string", required = true },
        { name = "member", title = "Member number", type = "string" }, -- the rule is kin's, not shown
        { name = "age", title = "Age", type = "integer" },
      },
    })
    t.wait_panel("Join the club")
    t.press("a")
    t.wait_panel("kin refused part of your answer")
    t.contains(t.panel_body(), "Member number must match the pattern ^[A-Z]{3}$")
    t.eq({ "  a  Answer again (1 field to correct)", "  d  Decline" }, t.panel_choices())
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 2
    end, "the corrected answer")
    t.eq({ name = "Ana", member = "ABC", age = 31 }, responses(fake)[2].content)
    t.eq(4, #t.inputs, "only the refused field was asked again")
    t.eq("abc", t.inputs[4].default, "asked again from what was typed")
  end)

  it("checks patterns, dates, date-times, emails and URIs before sending", function()
    t.capture_notify()
    local fake = setup()
    t.script_input({ "ab-1", "ABC-1234", "2026-02-30", "2026-02-28", "2026-11-30 23:15", "2026-11-30T23:15:00Z",
      "Ana <ana@example.com>", "ana@example.com", "example.com", "https://example.com", "toolongvalue", "ok" })
    fake:notify("elicitation/request", {
      requestId = "el_9", server = "club", mode = "form", message = "Details",
      fields = {
        { name = "member", title = "Member number", type = "string", pattern = "^[A-Z]{3}-[0-9]{4}$", required = true },
        { name = "born", title = "Born", type = "string", format = "date" },
        { name = "at", title = "At", type = "string", format = "date-time" },
        { name = "mail", title = "Mail", type = "string", format = "email" },
        { name = "home", title = "Home", type = "string", format = "uri" },
        { name = "nick", title = "Nick", type = "string", maxLength = 4 },
      },
    })
    t.wait_panel("Details")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ member = "ABC-1234", born = "2026-02-28", at = "2026-11-30T23:15:00Z", mail = "ana@example.com",
      home = "https://example.com", nick = "ok" }, responses(fake)[1].content)
    local notes = t.notes_text()
    t.contains(notes, "Member number must match the pattern ^[A-Z]{3}-[0-9]{4}$")
    t.contains(notes, "Born must be YYYY-MM-DD")
    t.contains(notes, "At must be e.g. 2026-11-30T23:15:00Z")
    t.contains(notes, "Mail must be an email address")
    t.contains(notes, "Home must be a URI")
    t.contains(notes, "Nick allows at most 4 characters")
  end)

  -- A form kin closes (its call ended, here) is closed here too: the question leaves kin's
  -- window, the picker still open for it is closed, the reason is told, and nothing is sent.
  it("closes a form kin resolved, saying why", function()
    t.capture_notify()
    local fake = setup()
    local pending_cb
    vim.ui.input = function(_, cb)
      pending_cb = cb -- the person is still typing
    end
    fake:notify("elicitation/request", FORM)
    t.wait_panel("Please provide your details")
    t.press("a")
    t.wait_for(function()
      return pending_cb ~= nil
    end, "the first field asked")
    fake:notify("elicitation/resolved", { requestId = "el_1", action = "cancel", reason = "call_ended" })
    t.wait_for(function()
      return t.notes_text():find("kin closed the question from everything: the tool call that asked ended without it", 1, true)
    end, "the reason told")
    t.eq(nil, t.panel(), "the question left kin's window")
    pending_cb("Ana") -- a late answer goes nowhere
    vim.wait(50)
    t.eq(0, #responses(fake))
  end)

  -- With dressing.nvim's real input open for the form, kin's resolution closes it.
  it("closes dressing.nvim's input when kin resolves the form", function()
    require("fixtures.plugins").use("dressing.nvim")
    require("dressing").setup({})
    t.capture_notify()
    local fake = setup()
    fake:notify("elicitation/request", FORM)
    t.wait_panel("Please provide your details")
    t.press("a")
    t.wait_for(function()
      return vim.bo.filetype == "DressingInput"
    end, "dressing's input for the first field")
    fake:notify("elicitation/resolved", { requestId = "el_1", action = "cancel", reason = "server_gone" })
    t.wait_for(function()
      return vim.bo.filetype ~= "DressingInput"
    end, "dressing's input closed")
    t.contains(t.notes_text(), "the MCP server that asked went away")
    t.eq(0, #responses(fake))
  end)
end)

-- Issue 27, Neovim 6: under dressing.nvim (builtin and telescope pickers) the picker's title on
-- the screen names the field, however long the server's message.
for _, backend in ipairs({ "builtin", "telescope" }) do
  describe("elicitation under dressing.nvim (" .. backend .. ")", function()
    it("the picker's title names the field and its description", function()
      local plugins = require("fixtures.plugins")
      plugins.use("dressing.nvim")
      if backend == "telescope" then
        plugins.use("plenary.nvim", "telescope.nvim")
      end
      require("dressing").setup({ select = { backend = { backend } } })
      local fake = setup()
      fake:notify("elicitation/request", {
        requestId = "el_10", server = "a-server-with-a-long-name", mode = "form",
        message = "Before we go on, please read our long terms of service and tell us whether you agree with them",
        fields = { { name = "check", title = "Boolean", description = "I agree to the terms", type = "boolean", required = true } },
      })
      t.wait_panel("It wants:")
      t.press("a")
      local ft = backend == "builtin" and "DressingSelect" or "TelescopePrompt"
      t.wait_for(function()
        return vim.bo.filetype == ft
      end, "dressing's " .. backend .. " picker")
      local screen = {}
      for row = 1, vim.o.lines do
        screen[#screen + 1] = t.screen_row(row)
      end
      t.contains(table.concat(screen, "\n"), "Boolean — I agree to the terms", "the picker's title on the screen")
    end)
  end)
end
