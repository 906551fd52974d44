import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { quickOptions, testStore } from "../lib/testing/github-kit.ts";
import { connectGitHub } from "../lib/boundaries/github.ts";
import { loadConfig } from "../lib/config.ts";
import { endSessions } from "../lib/testing/workers.ts";
import { git, signalChild } from "../lib/testing/fixtures.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { currentFingerprint } from "../lib/repos/onboard.ts";
import { recordApproval } from "../lib/repos/records.ts";
import { runtimeArgv } from "../lib/runtime.ts";
import { waitFor } from "../lib/testing/sessions.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { readHeartbeat } from "../lib/daemon/heartbeat.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { openStore } from "../lib/store/open.ts";
import { sessionState } from "../lib/sessions/state.ts";

const template = forgeTemplate();
test.after(() => template.remove());
const ROBOT_ARMY = join(import.meta.dirname!, "robot-army.ts");

/** A forge, a clone, a config with the process launcher and a one-second tick, the repository onboarded; the env to run robot-army in. */
function withForgeConfig(fn: (t: TestForge, env: Record<string, string>, state: string) => Promise<void>) {
  return () => template.use(async (t) => {
    const state = join(t.tmp, "state");
    const clone = join(t.tmp, "widgets");
    git(t.tmp, "clone", "--quiet", join(t.dir, "git", "demo", "widgets.git"), clone);
    const config = join(t.tmp, "config.toml");
    writeFileSync(config, [
      "[daemon]", "tick_seconds = 1", "",
      "[github]", `api_base = ${JSON.stringify(t.forge.url)}`, `token_file = ${JSON.stringify(join(t.dir, "tokens", "owner"))}`, 'author = "owner"', "",
      "[worker]", 'launcher = "process"', 'binary = "sh"', 'args = ["-c", "echo working; sleep 30"]', "",
      '[repos."demo/widgets"]', `path = ${JSON.stringify(clone)}`, "",
    ].join("\n"));
    const env = { ...process.env, RA_STATE_DIR: state, RA_SESSION_ROOT: join(state, "sessions"), RA_CONFIG: config } as Record<string, string>;
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await loadConfig({ env }), store, quickOptions());
      const approved = await currentFingerprint(github, { name: "demo/widgets", path: clone, base: "main" });
      recordApproval(store, "demo/widgets", clone, approved.fingerprint, approved.commit);
    } finally {
      store.close();
    }
    try {
      await fn(t, env, state);
    } finally {
      if (existsSync(env.RA_SESSION_ROOT)) await endSessions(env.RA_SESSION_ROOT);
    }
  });
}

/** Runs robot-army without blocking this process, which serves the forge. */
function robotArmy(argv: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const [bin, ...args] = runtimeArgv(ROBOT_ARMY);
  const child = spawn(bin, [...args, ...argv], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
}

function startDaemon(env: Record<string, string>): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const [bin, ...args] = runtimeArgv(ROBOT_ARMY);
  const child = spawn(bin, [...args, "run", "--effect-level", "live"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, out: () => out, exited };
}

test("run --once polls, dispatches and comments, ends with its summary, then exits 0 and leaves no lock", withForgeConfig(async (t, env, state) => {
  const result = await robotArmy(["run", "--once", "--effect-level", "live"], env);
  assert.is(result.status, 0, result.stderr + result.stdout);
  assert.match(result.stdout, "poll: demo/widgets: 3 new");
  assert.match(result.stdout, "dispatched demo/widgets#1 as ra-widgets-1 (item 1)");
  assert.match(result.stdout, "commented on demo/widgets#1 (dispatched)");
  assert.match(result.stdout, "waiting: demo/widgets#3: ");
  assert.ok(result.stdout.endsWith("\ntick 1: dispatched 2, failed 0, waiting 1; no step failed\n"), result.stdout);
  assert.not.ok(existsSync(join(state, "daemon.lock")));
  assert.ok(existsSync(join(state, "heartbeat.json")));
  const { data } = await t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 });
  assert.ok(data.some((c) => c.body?.startsWith("robot-army dispatched a session")));
}));

test("a second daemon is refused naming the first's pid; SIGTERM stops the first cleanly, exit 0, and its worker keeps running", withForgeConfig(async (_t, env, state) => {
  const daemon = startDaemon(env);
  try {
    await waitFor("the first dispatch", () => daemon.out().includes("dispatched demo/widgets#1"), 30_000);
    const second = await robotArmy(["run", "--once"], env);
    assert.is(second.status, 3, second.stderr);
    assert.match(second.stderr, `Another daemon (pid ${daemon.child.pid}) holds`);
    signalChild(daemon.child, "SIGTERM");
    const code = await daemon.exited;
    assert.is(code, 0, daemon.out());
    assert.match(daemon.out(), "stopping: SIGTERM received; worker sessions keep running");
    assert.not.ok(existsSync(join(state, "daemon.lock")), "the lock is released");
    const [worker] = listRecords(env.RA_SESSION_ROOT);
    assert.is(worker.name, "ra-widgets-1");
    assert.is(sessionState(env.RA_SESSION_ROOT, worker), "running", "the worker outlives the daemon");
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill("SIGKILL");
      await daemon.exited;
    }
  }
}));

test("a daemon whose stdout reader went away (`run | head -2`) keeps ticking, its heartbeat and audit log still written", withForgeConfig(async (_t, env, state) => {
  const [bin, ...args] = runtimeArgv(ROBOT_ARMY);
  const daemon = spawn(bin, [...args, "run", "--effect-level", "live"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  daemon.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => daemon.on("exit", (code) => resolve(code)));
  daemon.stdout!.destroy();
  try {
    await waitFor("the third tick's heartbeat", () => (readHeartbeat(state)?.tick ?? 0) >= 3, 30_000);
    assert.is(daemon.exitCode, null, stderr);
    signalChild(daemon, "SIGTERM");
    const code = await exited;
    assert.is(code, 0, stderr);
    assert.is(stderr, "");
  } finally {
    if (daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill("SIGKILL");
      await exited;
    }
  }
  const store = await openStore(state);
  try {
    assert.ok(queryAudit(store, { kind: "reconcile.pass" }).length >= 3);
    assert.ok(queryAudit(store, { kind: "state.work_item" }).length >= 1, "it dispatched with nobody reading");
  } finally {
    store.close();
  }
}));

test.run();
