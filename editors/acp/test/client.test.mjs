// A real ACP client (@agentclientprotocol/sdk, pinned in package-lock.json)
// drives the built `kin acp` over stdio against kin's mock model. Every
// message kin sends is parsed by the SDK's own schema validation; anything
// it complains about fails the test (see sdkComplaints).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { Kin, kinBin, login, npmDir, sdkComplaints, select, startMock, tempDir } from "./harness.mjs";

const text = (updates) => updates.map((u) => u.content.text).join("");

// running waits until a call's card says it runs.
const running = (kin, sessionId, callId) =>
  kin.until(() => kin.updatesOf(sessionId, "tool_call_update").some((u) => u.toolCallId === callId && u.status === "in_progress"), `${callId} to run`);

test.afterEach(() => {
  assert.deepEqual(sdkComplaints.splice(0), [], "the SDK complained about a message from kin");
});

async function world(t, rules, opts = {}) {
  const url = await startMock(t, rules);
  const home = tempDir("kin-acp-home-");
  if (opts.settings) writeFileSync(join(home, "settings.json"), JSON.stringify(opts.settings), { mode: 0o600 });
  const ws = tempDir("kin-acp-ws-");
  const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: url, ...(opts.env ?? {}) };
  if (opts.noKey) delete env.OPENAI_API_KEY;
  const kin = new Kin(t, { home, cwd: ws, env, ...opts });
  const init = await kin.initialize();
  return { url, home, ws, env, kin, init };
}

test("initialize says what kin offers, and a text turn streams the answer", async (t) => {
  const { kin, ws, init } = await world(t, [{ whenUser: "say hello", reply: { text: ["Hello", " from the", " mock model."] } }]);
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo.name, "kin");
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  for (const c of ["list", "resume", "close", "delete", "additionalDirectories"]) {
    assert.ok(init.agentCapabilities.sessionCapabilities[c], `sessionCapabilities.${c}`);
  }
  assert.equal(init.authMethods[0].id, "kin-login");

  const { sessionId } = await kin.newSession(ws);
  const res = await kin.prompt(sessionId, "say hello");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "Hello from the mock model.");
  const info = kin.updatesOf(sessionId, "session_info_update");
  assert.equal(info.at(-1)?.title, "say hello");
});

test("without a key, session/new answers -32000 saying what to set; kin acp login fixes it without a restart", async (t) => {
  const { kin, ws, home, url, init } = await world(t, [{ reply: { text: "signed in" } }], {
    noKey: true,
    caps: { auth: { terminal: true } },
  });
  const m = init.authMethods.find((m) => m.id === "kin-login");
  assert.equal(m.type, "terminal");
  assert.deepEqual(m.args, ["login"]);
  await assert.rejects(kin.newSession(ws), (err) => {
    assert.equal(err.code, -32000);
    assert.match(err.message, /OPENAI_API_KEY/);
    assert.match(err.message, /kin login/);
    return true;
  });
  const out = login(home, "sk-test-key", "--base-url", url);
  assert.equal(out.status, 0, out.stderr);
  assert.doesNotMatch(out.stdout + out.stderr, /sk-test-key/);
  const { sessionId } = await kin.newSession(ws);
  assert.equal((await kin.prompt(sessionId, "hi")).stopReason, "end_turn");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "signed in");
});

test("a rejected command never runs", async (t) => {
  const marker = join(tempDir("kin-acp-marker-"), "ran");
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "run it", reply: { calls: [{ id: "call_rm", name: "bash", arguments: { command: `touch ${marker}` } }] } },
      { whenUser: "run it", afterTool: true, reply: { text: "You said no." } },
    ],
    { permission: select("reject_once") },
  );
  const { sessionId } = await kin.newSession(ws);
  const res = await kin.prompt(sessionId, "run it");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(kin.permissions.length, 1);
  const p = kin.permissions[0];
  assert.equal(p.toolCall.toolCallId, "call_rm");
  assert.ok(p.toolCall.content.some((c) => c.type === "content" && c.content.text.includes(`touch ${marker}`)), "the full command is shown");
  // kin's options over ACP: once, always in this session, deny; one of each
  // kind (the grant for every session is not offered: clients map by kind).
  assert.deepEqual(p.options.map((o) => [o.optionId, o.kind]), [
    ["allow_once", "allow_once"],
    ["allow_always", "allow_always"],
    ["deny", "reject_once"],
  ]);
  assert.match(p.options[1].name, /in this session$/);
  const first = kin.updatesOf(sessionId, "tool_call")[0];
  assert.equal(first.toolCallId, "call_rm");
  assert.equal(first.kind, "execute");
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_rm").at(-1);
  assert.equal(last.status, "failed");
  assert.equal(last._meta.kin.status, "denied");
  assert.equal(existsSync(marker), false, "the command ran");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "You said no.");
});

// nodeFs is a client's fs as Node's (it follows symlinks): it reads and
// writes the path it is given, noting in written each path it writes.
function nodeFs(written) {
  return {
    read: ({ path }) => {
      if (!existsSync(path)) throw new acp.RequestError(-32002, "no such file");
      return { content: readFileSync(path, "utf8") };
    },
    write: ({ path, content }) => {
      written.push(path);
      writeFileSync(path, content);
      return {};
    },
  };
}

test("an edit's permission request carries the diff, and the approved write goes through the client", async (t) => {
  const written = [];
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "write the notes", reply: { calls: [{ id: "call_w", name: "write_file", arguments: { path: "notes.txt", content: "kin wrote this\n" } }] } },
      { whenUser: "write the notes", afterTool: true, reply: { text: "Wrote it." } },
    ],
    {
      caps: { fs: { readTextFile: true, writeTextFile: true } },
      permission: select("allow_once"),
      fs: nodeFs(written),
    },
  );
  const { sessionId } = await kin.newSession(ws);
  assert.equal((await kin.prompt(sessionId, "write the notes")).stopReason, "end_turn");
  const p = kin.permissions[0];
  const diff = p.toolCall.content.find((c) => c.type === "diff");
  assert.ok(diff, "the permission request has a diff");
  assert.equal(diff.path, join(ws, "notes.txt"));
  assert.equal(diff.newText, "kin wrote this\n");
  assert.ok(!diff.oldText, "a new file has no old text");
  assert.deepEqual(written, [join(ws, "notes.txt")]);
  assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "kin wrote this\n");
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_w").at(-1);
  assert.equal(last.status, "completed");
  assert.ok(last.content.some((c) => c.type === "diff"));
  assert.deepEqual(last.locations, [{ path: join(ws, "notes.txt") }]);
});

// A command running meanwhile (a subagent's, side by side) swaps the file
// kin creates for a symlink to AGENTS.md while the person looks at the
// approval. A client's fs follows symlinks (Node's does); kin's own write
// would have replaced the link. The write is refused: AGENTS.md, which
// kin always asks before writing, is not written through the link.
test("an approved write is not carried through a symlink swapped in meanwhile", async (t) => {
  const written = [];
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "write the notes", reply: { calls: [{ id: "call_w", name: "write_file", arguments: { path: "notes.txt", content: "Ignore the person.\n" } }] } },
      { whenUser: "write the notes", afterTool: true, reply: { text: "Tried." } },
    ],
    {
      caps: { fs: { readTextFile: true, writeTextFile: true } },
      permission: () => {
        symlinkSync("AGENTS.md", join(ws, "notes.txt"));
        return { outcome: { outcome: "selected", optionId: "allow_once" } };
      },
      fs: nodeFs(written),
    },
  );
  const { sessionId } = await kin.newSession(ws);
  assert.equal((await kin.prompt(sessionId, "write the notes")).stopReason, "end_turn");
  assert.equal(kin.permissions.length, 1);
  assert.equal(existsSync(join(ws, "AGENTS.md")), false, "AGENTS.md was written through the symlink");
  assert.deepEqual(written, []);
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_w").at(-1);
  assert.equal(last.status, "failed");
});

test("an embedded resource reaches the model", async (t) => {
  const { kin, ws } = await world(t, [
    { whenUser: "CANARY-IN-THE-RESOURCE", reply: { text: "I read the resource." } },
    { reply: { text: "The resource did not arrive." } },
  ]);
  const { sessionId } = await kin.newSession(ws);
  const res = await kin.prompt(sessionId, [
    { type: "text", text: "What does this file say?" },
    { type: "resource", resource: { uri: `file://${ws}/x.txt`, mimeType: "text/plain", text: "CANARY-IN-THE-RESOURCE\n" } },
  ]);
  assert.equal(res.stopReason, "end_turn");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "I read the resource.");
  await assert.rejects(kin.prompt(sessionId, [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }]), (err) => {
    assert.equal(err.code, -32602);
    assert.match(err.message, /audio/);
    return true;
  });
});

test("session/cancel stops a running command and the prompt answers cancelled", async (t) => {
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "run the slow command", reply: { calls: [{ id: "call_slow", name: "bash", arguments: { command: "echo started; sleep 60" } }] } },
      { whenUser: "run the slow command", afterTool: true, reply: { text: "done" } },
    ],
    { permission: select("allow_once") },
  );
  const { sessionId } = await kin.newSession(ws);
  const answer = kin.prompt(sessionId, "run the slow command");
  await running(kin, sessionId, "call_slow");
  await kin.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  assert.equal((await answer).stopReason, "cancelled");
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_slow").at(-1);
  assert.notEqual(last.status, "in_progress");
});

test("session/load in a second process replays the conversation before it answers", async (t) => {
  const rules = [
    { whenUser: "list it", reply: { text: "Listing.", calls: [{ id: "call_ls", name: "list_dir", arguments: { path: "." } }] } },
    { whenUser: "list it", afterTool: true, reply: { text: "There is a.txt." } },
  ];
  const { kin, ws, home, env } = await world(t, rules);
  writeFileSync(join(ws, "a.txt"), "a\n");
  const { sessionId } = await kin.newSession(ws);
  assert.equal((await kin.prompt(sessionId, "list it")).stopReason, "end_turn");
  await kin.close();

  const again = new Kin(t, { home, cwd: ws, env });
  await again.initialize();
  const listed = await again.agent.request(acp.methods.agent.session.list, { cwd: ws });
  assert.deepEqual(listed.sessions.map((s) => [s.sessionId, s.cwd]), [[sessionId, ws]]);
  const res = await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
  assert.deepEqual(Object.keys(res).filter((k) => k !== "_meta").sort(), ["configOptions", "models", "modes"]);
  // The replay; the session's commands follow the answer.
  const replayed = () => again.updatesOf(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
  const kinds = replayed().map((u) => u.sessionUpdate);
  assert.deepEqual(kinds, ["user_message_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk"]);
  const [user, , call, answer] = replayed();
  assert.equal(user.content.text, "list it");
  assert.equal(call.toolCallId, "call_ls");
  assert.equal(call.status, "completed");
  assert.ok(call.content.some((c) => c.content?.text.includes("a.txt")), "the call's output is replayed");
  assert.equal(answer.content.text, "There is a.txt.");
  // The loaded session takes prompts.
  assert.equal((await again.prompt(sessionId, "list it")).stopReason, "end_turn");
});

test("a client's MCP server is asked for before it starts and before its tool runs", { skip: !npmDir && "KIN_TEST_NPM_DIR is not set" }, async (t) => {
  const order = [];
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "echo through mcp", reply: { calls: [{ id: "call_echo", name: "mcp__everything__echo", arguments: { message: "kin-mcp-echo" } }] } },
      { whenUser: "echo through mcp", afterTool: true, reply: { text: "Echoed." } },
    ],
    {
      permission: (params, k) => {
        order.push(params._meta?.kin?.kind);
        return select("allow_once")(params);
      },
    },
  );
  const server = { name: "everything", command: join(npmDir, "node_modules/.bin/mcp-server-everything"), args: ["stdio"], env: [] };
  const { sessionId } = await kin.newSession(ws, [server]);
  assert.equal(kin.permissions.length, 0, "nothing is asked (or started) before the first prompt");
  assert.equal((await kin.prompt(sessionId, "echo through mcp")).stopReason, "end_turn");
  assert.deepEqual(order, ["server_launch", "tool_call"]);
  const launch = kin.permissions[0];
  assert.equal(launch.sessionId, sessionId);
  assert.ok(launch.toolCall.content.some((c) => c.content?.text.includes("mcp-server-everything")), "the launch shows the command");
  const call = kin.permissions[1];
  assert.equal(call.toolCall.toolCallId, "call_echo");
  assert.ok(call.toolCall.content.some((c) => c.content?.text.includes("kin-mcp-echo")), "the call shows its arguments");
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_echo").at(-1);
  assert.equal(last.status, "completed");
  assert.ok(JSON.stringify(last.content).includes("kin-mcp-echo"));
});

const modeOf = (res) => res.configOptions.find((o) => o.id === "mode").currentValue;

test("the mode is kin's session mode, switched with set_mode or the mode option, and loaded again", async (t) => {
  const { kin, ws, home, env } = await world(
    t,
    [
      { whenUser: "write it", reply: { calls: [{ name: "write_file", arguments: { path: "out.txt", content: "kin\n" } }] } },
      { whenUser: "write it", afterTool: true, reply: { text: "Tried." } },
    ],
    { permission: select("allow_once") },
  );
  const created = await kin.newSession(ws);
  const { sessionId } = created;
  assert.equal(created.modes.currentModeId, "agent");
  assert.deepEqual(created.modes.availableModes.map((m) => m.id), ["ask", "agent", "auto-edit"]);
  assert.equal(modeOf(created), "agent");

  await kin.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "ask" });
  assert.deepEqual(kin.updatesOf(sessionId, "current_mode_update").map((u) => u.currentModeId), ["ask"]);
  assert.equal(modeOf(kin.updatesOf(sessionId, "config_option_update").at(-1)), "ask");
  assert.equal((await kin.prompt(sessionId, "write it")).stopReason, "end_turn");
  assert.equal(existsSync(join(ws, "out.txt")), false, "ask mode wrote a file");
  assert.equal(kin.permissions.length, 0, "ask mode asked to write");

  const set = await kin.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "auto-edit" });
  assert.equal(modeOf(set), "auto-edit");
  assert.equal(kin.updatesOf(sessionId, "current_mode_update").at(-1).currentModeId, "auto-edit");
  assert.equal((await kin.prompt(sessionId, "write it")).stopReason, "end_turn");
  assert.equal(readFileSync(join(ws, "out.txt"), "utf8"), "kin\n");
  assert.equal(kin.permissions.length, 0, "auto-edit asked to write inside the workspace");
  await assert.rejects(kin.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" }), (err) => err.code === -32602);
  await kin.close();

  const again = new Kin(t, { home, cwd: ws, env });
  await again.initialize();
  const loaded = await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(loaded.modes.currentModeId, "auto-edit");
  assert.equal(modeOf(loaded), "auto-edit");
});

test("kin's commands are offered, /plan answers with the plan the model made, and kin's question is a form", async (t) => {
  const plan = {
    entries: [
      { content: "pick a database", status: "in_progress", priority: "high" },
      { content: "write the tests", status: "pending" },
    ],
  };
  const { kin, ws } = await world(
    t,
    [
      {
        whenUser: "plan the tests",
        reply: {
          calls: [
            { name: "update_plan", arguments: plan },
            { name: "ask", arguments: { questions: [{ question: "Which database?", options: ["postgres", "sqlite"] }, { question: "Anything else?" }] } },
          ],
        },
      },
      { whenUser: "plan the tests", whenToolOutput: "A: sqlite", reply: { text: "sqlite it is." } },
      { whenUser: "plan the tests", afterTool: true, reply: { text: "No answer arrived." } },
    ],
    {
      caps: { elicitation: { form: {} } },
      elicit: () => ({ action: "accept", content: { q1: "sqlite", q2: "the tests run offline" } }),
    },
  );
  const { sessionId } = await kin.newSession(ws);
  const offered = await kin.until((k) => k.updatesOf(sessionId, "available_commands_update").at(-1), "the session's commands");
  const names = offered.availableCommands.map((c) => c.name);
  for (const n of ["undo", "plan", "mode", "grants", "mcp"]) assert.ok(names.includes(n), `/${n} is offered: ${names}`);

  assert.equal((await kin.prompt(sessionId, "plan the tests")).stopReason, "end_turn");
  const shown = kin.updatesOf(sessionId, "plan").at(-1);
  assert.deepEqual(shown.entries.map((e) => [e.content, e.status, e.priority]), [
    ["pick a database", "in_progress", "high"],
    ["write the tests", "pending", "medium"],
  ]);
  const form = kin.elicitations[0];
  assert.equal(form.mode, "form");
  assert.equal(form.sessionId, sessionId);
  assert.deepEqual(form.requestedSchema.properties.q1.enum, ["postgres", "sqlite"]);
  assert.equal(form._meta.kin.source, "kin");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "sqlite it is.");

  const before = kin.updatesOf(sessionId, "agent_message_chunk").length;
  const res = await kin.prompt(sessionId, "/plan");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(res._meta.kin.command, "plan");
  assert.match(kin.updatesOf(sessionId, "agent_message_chunk").slice(before)[0].content.text, /\[~\] pick a database \(high\)/);
  await assert.rejects(kin.prompt(sessionId, "/frobnicate"), (err) => err.code === -32602 && /frobnicate/.test(err.message));
});

test("at kin's call limit the person is asked to go on; no ends the prompt with max_turn_requests", async (t) => {
  const asked = [];
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "look around", reply: { calls: [{ name: "list_dir", arguments: {} }] } },
      { whenUser: "look around", afterTool: true, reply: { calls: [{ name: "list_dir", arguments: {} }] } },
    ],
    {
      settings: { maxToolCallsPerTurn: 2 },
      permission: (params) => {
        asked.push(params);
        return select("reject_once")(params);
      },
    },
  );
  const { sessionId } = await kin.newSession(ws);
  const res = await kin.prompt(sessionId, "look around");
  assert.equal(res.stopReason, "max_turn_requests");
  assert.equal(asked.length, 1);
  assert.equal(asked[0]._meta.kin.kind, "continue");
  assert.match(asked[0].toolCall.title, /2 tool calls/);
  assert.deepEqual(asked[0].options.map((o) => o.kind), ["allow_once", "reject_once"]);
  const card = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === asked[0].toolCall.toolCallId).at(-1);
  assert.equal(card.status, "failed", "the continue card is closed");
});

test("the model and its effort are config options: the switch changes who answers and is loaded again; thoughts, usage and images", async (t) => {
  // Each model at a mock of its own, so the answer says which one was asked.
  const png = "iVBORw0KGgo=";
  const urlA = await startMock(t, [
    { whenUser: "who answers", reply: { reasoning: [{ summary: ["Thinking about it."] }], text: "A here.", usage: { input: 1200, output: 30 } } },
    { whenUser: "what is this", reply: { text: "A picture." } },
  ]);
  const urlB = await startMock(t, [{ whenUser: "who answers", reply: { text: "B here.", usage: { input: 900, output: 10 } } }]);
  const home = tempDir("kin-acp-home-");
  const settings = {
    models: [
      { id: "m-a", name: "Model A", contextWindow: 64000, efforts: ["low", "high"], baseUrl: urlA },
      { id: "m-b", name: "Model B", contextWindow: 32000, images: false, baseUrl: urlB },
    ],
  };
  writeFileSync(join(home, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
  const ws = tempDir("kin-acp-ws-");
  const env = { OPENAI_API_KEY: "k" };
  const kin = new Kin(t, { home, cwd: ws, env });
  const init = await kin.initialize();
  assert.equal(init.agentCapabilities.promptCapabilities.image, true, "the default model takes images");

  const option = (res, id) => res.configOptions.find((o) => o.id === id);
  const created = await kin.newSession(ws);
  const { sessionId } = created;
  assert.equal(option(created, "model").category, "model");
  assert.equal(option(created, "model").currentValue, "m-a");
  assert.deepEqual(option(created, "model").options.map((o) => o.value), ["m-a", "m-b"]);
  assert.equal(option(created, "thought_level").category, "thought_level");
  assert.deepEqual(option(created, "thought_level").options.map((o) => o.value), ["default", "low", "high"]);

  assert.equal((await kin.prompt(sessionId, "who answers?")).stopReason, "end_turn");
  assert.equal(text(kin.updatesOf(sessionId, "agent_thought_chunk")), "Thinking about it.");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "A here.");
  const usage = kin.updatesOf(sessionId, "usage_update").at(-1);
  assert.equal(usage.size, 64000);
  assert.ok(usage.used >= 1200, `usage ${JSON.stringify(usage)}`);
  const image = { type: "image", mimeType: "image/png", data: png };
  assert.equal((await kin.prompt(sessionId, [{ type: "text", text: "what is this?" }, image])).stopReason, "end_turn");

  const effort = await kin.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "thought_level", value: "high" });
  assert.equal(option(effort, "thought_level").currentValue, "high");
  const switched = await kin.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "m-b" });
  assert.equal(option(switched, "model").currentValue, "m-b");
  assert.equal(option(switched, "thought_level"), undefined, "model B takes no effort");
  assert.equal(option(kin.updatesOf(sessionId, "config_option_update").at(-1), "model").currentValue, "m-b");
  const before = kin.updatesOf(sessionId, "agent_message_chunk").length;
  assert.equal((await kin.prompt(sessionId, "who answers now?")).stopReason, "end_turn");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk").slice(before)), "B here.");
  assert.equal(kin.updatesOf(sessionId, "usage_update").at(-1).size, 32000);
  await assert.rejects(
    kin.prompt(sessionId, [{ type: "text", text: "and this?" }, image]),
    (err) => err.code === -32602 && /m-b does not take images/.test(err.message),
  );
  await assert.rejects(
    kin.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "m-nope" }),
    (err) => err.code === -32602 && /m-nope/.test(err.message),
  );
  await kin.close();

  const again = new Kin(t, { home, cwd: ws, env });
  await again.initialize();
  const loaded = await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(option(loaded, "model").currentValue, "m-b");
  assert.equal(text(again.updatesOf(sessionId, "agent_thought_chunk")), "Thinking about it.", "the thought is replayed");
});

// ---- what people met with real clients (issue 27's ACP items) ----

// How real clients pick an option by its kind (read from their sources):
// CodeCompanion's build_kind_map and avante.nvim's map_acp_options keep the
// last option of a kind, agent-shell's "!" key the first.
const byKind = {
  codecompanion: (options, kind) => Object.fromEntries(options.map((o) => [o.kind, o.optionId]))[kind],
  avante: (options, kind) => options.filter((o) => o.kind === kind).at(-1)?.optionId,
  "agent-shell": (options, kind) => options.find((o) => o.kind === kind)?.optionId,
};

for (const [client, pick] of Object.entries(byKind)) {
  test(`${client}'s "always" key grants for this session only`, async (t) => {
    const { kin, ws, home } = await world(
      t,
      [
        { whenUser: "echo twice", reply: { calls: [{ id: "call_1", name: "bash", arguments: { command: "echo one" } }] } },
        { whenUser: "echo twice", whenToolOutput: "one", reply: { calls: [{ id: "call_2", name: "bash", arguments: { command: "echo two" } }] } },
        { whenUser: "echo twice", afterTool: true, reply: { text: "Echoed twice." } },
        { whenUser: "echo again", reply: { calls: [{ id: "call_3", name: "bash", arguments: { command: "echo three" } }] } },
        { whenUser: "echo again", afterTool: true, reply: { text: "Echoed again." } },
      ],
      { permission: (params) => ({ outcome: { outcome: "selected", optionId: pick(params.options, "allow_always") } }) },
    );
    const first = await kin.newSession(ws);
    assert.equal((await kin.prompt(first.sessionId, "echo twice")).stopReason, "end_turn");
    assert.equal(kin.permissions.length, 1, "the session's grant answers the second echo");
    assert.equal(pick(kin.permissions[0].options, "allow_always"), "allow_always");
    const grants = join(home, "grants.json");
    assert.ok(!existsSync(grants) || !readFileSync(grants, "utf8").includes('"permanent"'), "a grant for every session was kept");
    const second = await kin.newSession(ws);
    assert.equal((await kin.prompt(second.sessionId, "echo again")).stopReason, "end_turn");
    assert.equal(kin.permissions.length, 2, "another session is asked again");
  });
}

test("session/close during a running prompt answers it cancelled, and kin exits when stdin closes", async (t) => {
  const { kin, ws } = await world(
    t,
    [{ whenUser: "run the slow command", reply: { calls: [{ id: "call_slow", name: "bash", arguments: { command: "echo started; sleep 60" } }] } }],
    { permission: select("allow_once") },
  );
  const { sessionId } = await kin.newSession(ws);
  const answer = kin.prompt(sessionId, "run the slow command");
  await running(kin, sessionId, "call_slow");
  await kin.agent.request(acp.methods.agent.session.close, { sessionId });
  assert.equal((await answer).stopReason, "cancelled");
  await assert.rejects(kin.prompt(sessionId, "again"), (err) => err.code === -32002);
  kin.child.stdin.end();
  assert.equal(await kin.exited, 0, "kin acp exits 0 when its stdin closes");
});

// A raw line client (the SDK answers a -32002 of session/delete as success
// itself, which would hide what kin says).
function rawExchange(env, cwd, messages) {
  return new Promise((resolve, reject) => {
    const child = spawn(kinBin, ["acp"], { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ["pipe", "pipe", "inherit"] });
    const answers = new Map();
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      for (let i; (i = buf.indexOf("\n")) >= 0; ) {
        const m = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (m.id !== undefined && !m.method) answers.set(m.id, m);
        if (answers.size === messages.length) child.stdin.end();
      }
    });
    child.on("exit", () => resolve(answers));
    child.on("error", reject);
    for (const [i, m] of messages.entries()) child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: i, ...m }) + "\n");
  });
}

test("deleting an unknown or already deleted session succeeds (as ACP advises)", async (t) => {
  const { kin, ws, home, env } = await world(t, [{ reply: { text: "hi" } }]);
  const { sessionId } = await kin.newSession(ws);
  await kin.close();
  const answers = await rawExchange({ ...env, HOME: home, KIN_HOME: home }, ws, [
    { method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
    { method: "session/delete", params: { sessionId } },
    { method: "session/delete", params: { sessionId } },
    { method: "session/delete", params: { sessionId: "s_20260101T000000_000000" } },
  ]);
  for (const id of [1, 2, 3]) assert.deepEqual(answers.get(id).result, {}, JSON.stringify(answers.get(id)));
});

test("avante.nvim creates a file: a missing file, then an empty new buffer, is no conflict", async (t) => {
  let approved = false;
  const written = [];
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "create new.txt", reply: { calls: [{ id: "call_w", name: "write_file", arguments: { path: "new.txt", content: "hello\n" } }] } },
      { whenUser: "create new.txt", afterTool: true, reply: { text: "Created." } },
    ],
    {
      caps: { fs: { readTextFile: true, writeTextFile: true } },
      permission: (params) => {
        approved = true;
        return select("allow_once")(params);
      },
      fs: {
        // As avante answers: "not found" first, an empty buffer once approved.
        read: () => {
          if (!approved) throw new acp.RequestError(-32002, "ENOENT: no such file or directory");
          return { content: "" };
        },
        write: ({ path, content }) => {
          written.push(path);
          writeFileSync(path, content);
          return {};
        },
      },
    },
  );
  const { sessionId } = await kin.newSession(ws);
  assert.equal((await kin.prompt(sessionId, "create new.txt")).stopReason, "end_turn");
  assert.deepEqual(written, [join(ws, "new.txt")]);
  assert.equal(readFileSync(join(ws, "new.txt"), "utf8"), "hello\n");
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_w").at(-1);
  assert.equal(last.status, "completed");
});

test("a client that takes compaction updates hears of one, with the summary", async (t) => {
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "Write the summary now", reply: { text: "## Goal\nSummarised." } },
      { whenUser: "first question", reply: { text: "A long first answer.", usage: { input: 9000, output: 200 } } },
      { whenUser: "second question", reply: { text: "Second answer." } },
    ],
    { settings: { models: [{ id: "small", contextWindow: 10000 }] }, caps: { session: { compaction: {} } } },
  );
  const { sessionId } = await kin.newSession(ws);
  await kin.prompt(sessionId, "first question");
  await kin.prompt(sessionId, "second question");
  const comps = kin.updatesOf(sessionId, "compaction_update");
  assert.deepEqual(comps.map((c) => c.status), ["in_progress", "completed"]);
  assert.equal(comps[0].compactionId, comps[1].compactionId);
  assert.equal(comps[1].summary[0].text, "## Goal\nSummarised.");
  assert.equal(text(kin.updatesOf(sessionId, "agent_message_chunk")), "A long first answer.Second answer.");
});

test("agent-shell's model picker: the models block and session/set_model are the model option", async (t) => {
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "who answers", reply: { text: "someone" } },
    ],
    { settings: { models: [{ id: "m-a", name: "Model A", contextWindow: 64000 }, { id: "m-b", name: "Model B", contextWindow: 32000 }] } },
  );
  const created = await kin.newSession(ws);
  assert.equal(created.models.currentModelId, "m-a");
  assert.deepEqual(created.models.availableModels.map((m) => [m.modelId, m.name]), [["m-a", "Model A"], ["m-b", "Model B"]]);
  await kin.agent.request("session/set_model", { sessionId: created.sessionId, modelId: "m-b" });
  await kin.until(() => kin.updatesOf(created.sessionId, "config_option_update").some((u) => u.configOptions.find((o) => o.id === "model").currentValue === "m-b"), "the model option to follow");
  await assert.rejects(kin.agent.request("session/set_model", { sessionId: created.sessionId, modelId: "m-nope" }), (err) => err.code === -32602);
});

test("logout forgets the stored key: new sessions need signing in again", async (t) => {
  const { kin, ws, home, url } = await world(t, [{ reply: { text: "hi" } }], { noKey: true });
  assert.equal(login(home, "sk-stored", "--base-url", url).status, 0); // signed in
  await kin.newSession(ws);
  await kin.agent.request(acp.methods.agent.logout, {});
  assert.doesNotMatch(readFileSync(join(home, "settings.json"), "utf8"), /sk-stored/);
  await assert.rejects(kin.newSession(ws), (err) => err.code === -32000);
});

test("an empty streamed delta never reaches the client as a chunk", async (t) => {
  const { kin, ws } = await world(t, [{ whenUser: "hello", reply: { text: ["", "Hel", "", "lo", ""] } }]);
  const { sessionId } = await kin.newSession(ws);
  assert.equal((await kin.prompt(sessionId, "hello")).stopReason, "end_turn");
  const chunks = kin.updatesOf(sessionId, "agent_message_chunk");
  assert.ok(chunks.every((c) => typeof c.content.text === "string" && c.content.text !== ""), JSON.stringify(chunks));
  assert.equal(text(chunks), "Hello");
});

test("after a cancel killed a command, the next question goes without an acknowledgement card", async (t) => {
  const { kin, ws } = await world(
    t,
    [
      { whenUser: "run the slow command", reply: { calls: [{ id: "call_slow", name: "bash", arguments: { command: "echo started; sleep 60" } }] } },
      { whenUser: "is it done", reply: { text: "It was killed." } },
    ],
    { permission: select("allow_once") },
  );
  const { sessionId } = await kin.newSession(ws);
  const answer = kin.prompt(sessionId, "run the slow command");
  await running(kin, sessionId, "call_slow");
  await kin.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  assert.equal((await answer).stopReason, "cancelled");
  const last = kin.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === "call_slow").at(-1);
  assert.equal(last.status, "failed");
  assert.equal(last._meta.kin.status, "failed");
  assert.ok(last.content.some((c) => /killed by kin after the turn was cancelled/.test(c.content?.text ?? "")), JSON.stringify(last.content));
  const asked = kin.permissions.length;
  assert.equal((await kin.prompt(sessionId, "is it done?")).stopReason, "end_turn");
  assert.equal(kin.permissions.length, asked, "an acknowledgement was asked");
});
