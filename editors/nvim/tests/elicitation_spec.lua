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
    t.eq(0, #(t.inputs or {}), "nothing is asked before the person chooses Answer")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ requestId = "el_1", action = "accept", content = { name = "Ana", age = 31, color = "red", subscribe = true } }, responses(fake)[1])
    t.contains(t.inputs[1].prompt, "[everything] Please provide your details › Name")
    t.contains(t.inputs[2].prompt, "Age (0–150, optional)")
    t.contains(t.notes_text(), "Age must be a number")
    t.contains(t.notes_text(), "Age must be at most 150")
    t.contains(t.notes_text(), "Age must be a whole number")
    t.eq({ "Red", "Green", "(leave empty)" }, t.selects[1].labels)
    t.eq({ "Yes", "No" }, t.selects[2].labels)
    t.contains(t.selects[2].prompt, "[everything]")
  end)

  it("declines the whole request when one field is dismissed", function()
    local fake = setup()
    t.script_input({ "Ana", "" })
    t.script_select({ false })
    fake:notify("elicitation/request", FORM)
    t.wait_panel("everything asks: Please provide your details")
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
    t.wait_panel("Fish (choices; Tuna / Salmon / Trout; default fish-1)")
    t.press("a")
    t.wait_for(function()
      return #responses(fake) == 1
    end, "elicitation/respond")
    t.eq({ requestId = "el_5", action = "accept", content = { born = "1990-04-01", fish = { "fish-2", "fish-3" } } }, responses(fake)[1])
    t.contains(t.notes_text(), "Birthdate must be YYYY-MM-DD")
    t.contains(t.notes_text(), "Fish allows at most 2 choices")
    t.eq({ "[x] Tuna", "[ ] Salmon", "[ ] Trout", "Done (1 chosen)" }, t.selects[1].labels)
    t.contains(t.selects[1].prompt, "Fish (1–2 choices, optional)")
    t.contains(t.inputs[1].prompt, "Birthdate (YYYY-MM-DD, optional)")
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
end)
