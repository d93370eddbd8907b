// The pieces of the ACP client test: kin's mock model, the built `kin acp`
// in a private KIN_HOME, and the official SDK's client connected to it over
// the process's stdio. "Done" is always an update or an answer the test
// waits for, never a sleep.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

export const kinBin = process.env.KIN_BIN;
export const mockBin = process.env.KIN_MOCKMODEL_BIN;
export const npmDir = process.env.KIN_TEST_NPM_DIR;
if (!kinBin || !mockBin) {
  throw new Error("set KIN_BIN and KIN_MOCKMODEL_BIN to the built kin and mockmodel binaries (see .ci/test-all.sh)");
}

// sdkComplaints collects what the SDK prints when a message from kin does
// not validate or cannot be routed: any of it fails the test.
export const sdkComplaints = [];
const origError = console.error;
console.error = (...args) => {
  const line = args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
  if (/Error handling (notification|request)|Invalid message|Got response to unknown request|Error parsing|validation/i.test(line)) {
    sdkComplaints.push(line);
  }
  origError(...args);
};

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

// startMock runs mockmodel with rules and resolves to its base URL.
export async function startMock(t, rules) {
  const dir = tempDir("kin-acp-mock-");
  const file = join(dir, "rules.json");
  writeFileSync(file, JSON.stringify({ rules }));
  const child = spawn(mockBin, ["-rules", file, "-exit-on-stdin-close"], { stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => child.stdin.end());
  const url = await new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      const m = buf.match(/listening (\S+)/);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`mockmodel exited ${code}`)));
  });
  return url;
}

// Kin is one `kin acp` process and the SDK client on its stdio.
export class Kin {
  constructor(t, { home, cwd, env = {}, caps = {}, permission, fs, elicit }) {
    this.updates = []; // every session/update, in order
    this.permissions = []; // every session/request_permission's params
    this.elicitations = []; // every elicitation/create's params
    this.fsCalls = [];
    this.waiters = [];
    this.stderr = "";
    this.child = spawn(kinBin, ["acp", "--log-level", "debug"], {
      cwd,
      env: { PATH: process.env.PATH, HOME: home, KIN_HOME: home, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => this.child.on("exit", resolve));
    t.after(async () => {
      this.child.stdin.end();
      await this.exited;
      if (t.diagnostic && this.stderrOnFailure) t.diagnostic(this.stderr);
    });
    const stream = acp.ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout));
    const app = acp
      .client({ name: "kin-acp-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        this.poke();
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        this.permissions.push(params);
        this.poke();
        return (permission ?? (() => ({ outcome: { outcome: "cancelled" } })))(params, this);
      });
    if (fs) {
      app
        .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
          this.fsCalls.push({ method: "read", ...params });
          return fs.read(params);
        })
        .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
          this.fsCalls.push({ method: "write", ...params });
          return fs.write(params);
        });
    }
    if (elicit) {
      app.onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
        this.elicitations.push(params);
        this.poke();
        return elicit(params);
      });
    }
    this.conn = app.connect(stream);
    this.agent = this.conn.agent;
    this.caps = caps;
  }

  poke() {
    for (const w of this.waiters.splice(0)) w();
  }

  // until waits for pred over what arrived so far to hold.
  async until(pred, what) {
    for (;;) {
      const v = pred(this);
      if (v) return v;
      await Promise.race([
        new Promise((r) => this.waiters.push(r)),
        this.exited.then(() => {
          throw new Error(`kin acp exited while waiting for ${what}\n${this.stderr}`);
        }),
      ]);
    }
  }

  updatesOf(sessionId, kind) {
    return this.updates.filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind)).map((u) => u.update);
  }

  async initialize() {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: this.caps,
      clientInfo: { name: "kin-acp-test", version: "1" },
    });
  }

  async newSession(cwd, mcpServers = []) {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
  }

  async prompt(sessionId, prompt) {
    if (typeof prompt === "string") prompt = [{ type: "text", text: prompt }];
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt });
  }

  async close() {
    this.child.stdin.end();
    await this.exited;
  }
}

// select answers a permission request with the option of a kind.
export function select(kind) {
  return (params) => {
    const o = params.options.find((o) => o.kind === kind);
    if (!o) throw new Error(`no ${kind} option in ${JSON.stringify(params.options)}`);
    return { outcome: { outcome: "selected", optionId: o.optionId } };
  };
}

// login runs `kin acp login` as a client's terminal sign-in would, with the
// key on stdin.
export function login(home, key, ...args) {
  return spawnSync(kinBin, ["acp", "login", ...args], {
    input: key + "\n",
    env: { PATH: process.env.PATH, HOME: home, KIN_HOME: home },
    encoding: "utf8",
  });
}
