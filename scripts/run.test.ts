import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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

test("a second daemon is refused naming the first's pid; SIGTERM stops the first cleanly, exit 0, its heartbeat saying so, and its worker keeps running", withForgeConfig(async (_t, env, state) => {
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
    const beat = readHeartbeat(state)!;
    assert.equal([beat.pid, beat.stopped?.reason, beat.next_at], [daemon.child.pid, "SIGTERM", null], "its heartbeat says it was stopped, so health reads STOPPED, never DIED");
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

test("a changed config.toml is taken at the next pass (SIGHUP brings it at once); a broken one is refused with its line while the daemon runs on the last good one, in its log, status, anomalies, audit and doctor", withForgeConfig(async (_t, env, state) => {
  // A pass every 10 minutes: within this test only SIGHUP starts one.
  const first = readFileSync(env.RA_CONFIG, "utf8").replace("tick_seconds = 1", "tick_seconds = 600");
  writeFileSync(env.RA_CONFIG, first);
  const daemon = startDaemon(env);
  const hup = async (what: string, seen: (out: string) => boolean) => {
    signalChild(daemon.child, "SIGHUP");
    await waitFor(what, () => seen(daemon.out()), 20_000);
  };
  try {
    await waitFor("the first pass", () => /\ntick 1: /.test(daemon.out()), 30_000);
    const second = first.replace("tick_seconds = 600", "tick_seconds = 600\npoll_seconds = 45");
    writeFileSync(env.RA_CONFIG, second);
    await hup("the new config applied", (out) => out.includes("config applied from"));
    assert.match(daemon.out(), `config applied from ${env.RA_CONFIG}: daemon.poll_seconds: 60 -> 45\n`);
    assert.is(readHeartbeat(state)?.config?.path, env.RA_CONFIG);
    const doctor = await robotArmy(["doctor", "--json"], env);
    const configCheck = (JSON.parse(doctor.stdout).checks as Array<{ check: string; status: string; detail: string }>).find((c) => c.check === "config")!;
    assert.equal([configCheck.status, configCheck.detail.includes(`the running daemon (pid ${daemon.child.pid}) runs it as it is`)], ["ok", true], configCheck.detail);

    writeFileSync(env.RA_CONFIG, second.replace("poll_seconds = 45", "pol_seconds = 45"));
    await hup("the broken config refused", (out) => out.includes("config not applied"));
    const line = `config not applied, the daemon runs the last good one: Cannot read config "${env.RA_CONFIG}": unknown key "daemon.pol_seconds" (line 3)`;
    assert.ok(daemon.out().includes(line), daemon.out());
    assert.is(daemon.child.exitCode, null, "the daemon runs on");
    // status reads the same file: it says the same, in one line, and exits 3; the anomaly is the store's.
    const status = await robotArmy(["status"], env);
    assert.is(status.status, 3);
    assert.ok(status.stderr.startsWith(`robot-army: ${line.slice(line.indexOf("Cannot read config"))}; known keys of [daemon]`), status.stderr);
    const anomalies = await robotArmy(["anomalies", "--json"], env);
    const open = (JSON.parse(anomalies.stdout) as { anomalies: Array<{ kind: string; detail: string }> }).anomalies;
    assert.equal(open.map((a) => [a.kind, a.detail.startsWith(line)]), [["config_refused", true]], anomalies.stdout + anomalies.stderr);
    const refusedDoctor = await robotArmy(["doctor", "--json"], env);
    const refusedCheck = (JSON.parse(refusedDoctor.stdout).checks as Array<{ check: string; status: string; detail: string }>).find((c) => c.check === "config")!;
    assert.is(refusedCheck.status, "FAIL");
    assert.match(refusedCheck.detail, 'refused it as it is now and runs what it applied');
    assert.match(refusedCheck.detail, 'unknown key "daemon.pol_seconds" (line 3)');

    writeFileSync(env.RA_CONFIG, second);
    await hup("the applied config back", (out) => out.includes("holds the applied config again"));
    const store = await openStore(state);
    try {
      const kinds = queryAudit(store, {}).map((r) => r.kind).filter((k) => k.startsWith("config.") || k.startsWith("anomaly."));
      assert.equal(kinds, ["config.applied", "anomaly.raised", "config.refused", "anomaly.retracted"]);
    } finally {
      store.close();
    }
    signalChild(daemon.child, "SIGTERM");
    assert.is(await daemon.exited, 0, daemon.out());
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill("SIGKILL");
      await daemon.exited;
    }
  }
}));

test.run();
