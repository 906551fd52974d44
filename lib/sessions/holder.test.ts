import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError, UsageError } from "../errors.ts";
import { identify, liveness } from "../processes.ts";
import { exitCodeOf, holdSession, retained, update } from "./holder.ts";
import { listRecords, readRecord, readSessionEvents, removeSessionFiles, sessionFiles } from "./records.ts";
import type { SessionRecord } from "./records.ts";
import { createSession, startDetached } from "./start.ts";
import type { SessionSpec } from "./start.ts";
import { childRunning, commandRuns, leftRunning, sessionState, workerRuns } from "./state.ts";
import { stopSession } from "./stop.ts";
import { spawn } from "node:child_process";
import { groupMembers } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { childIdentity, holderIdentity } from "./records.ts";
import { PROJECT_ROOT, runtimeArgv } from "../runtime.ts";
import { holderGone, inSessionDir, rejection, sleep, trackSessionProcesses, waitFor } from "../testing/sessions.ts";

/** Every process a test started (holders and children), so none outlives its test. */
const { start: startSession, leaked } = trackSessionProcesses(test, { childrenBy: "pid" });

const shell = (script: string, extra: Partial<SessionSpec> = {}): SessionSpec => ({ command: "sh", args: ["-c", script], ...extra });

/** The files the root holds for one session (the lock file included). */
function filesOf(root: string, id: string): string[] {
  return readdirSync(root).filter((name) => name.includes(id)).sort();
}

async function exitRecorded(root: string, id: string): Promise<SessionRecord> {
  return await waitFor(`the exit of ${id} to be recorded`, () => {
    const record = readRecord(root, id);
    return record?.exitedAt ? record : undefined;
  });
}

// --- a foreground holder in a process of its own

test("a foreground worker whose holder was killed still runs while what its command started runs in the group it shares with its holder", inSessionDir(async ({ root, work }) => {
  const [runtime, ...script] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const argv = [...script, "session", "run", "--name=fg", "--tag=ra_item=1", `--cwd=${work}`, "--", "sh", "-c", "sleep 30 & exec sleep 1"];
  // A group this test makes (and so may end): the holder leads it, its foreground child joins it.
  const holder = spawn(runtime, argv, { env: { ...process.env, RA_SESSION_ROOT: root }, detached: true, stdio: "ignore" });
  const pgid = holder.pid!;
  try {
    const record = await waitFor("the child on record", () => listRecords(root).find((r) => r.childPid !== null), 15_000);
    assert.is(record.childPgid, null, "a foreground child is in its holder's group, not one of its own");
    assert.is(record.sharedPgid, pgid);
    const identity = holderIdentity(record) as ProcessIdentity;
    assert.is(liveness(identity), "running");
    process.kill(identity.pid, "SIGKILL");
    await waitFor("the holder to be gone", () => liveness(identity) === "exited");
    await waitFor("the child to end", () => liveness(childIdentity(record) as ProcessIdentity) === "exited", 5_000);
    const seen = readRecord(root, record.id)!;
    assert.is(sessionState(root, seen), "vanished");
    assert.is(workerRuns(root, seen), true, "the sleep it left in the group still runs");
    process.kill(-pgid, "SIGKILL");
    await waitFor("the group to end", () => groupMembers(pgid).length === 0);
    assert.is(workerRuns(root, seen), false);
  } finally {
    if (groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
  }
}));

// --- createSession

test("createSession writes a record that is starting: no holder yet, generation 1", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("exit 0", { cwd: work, tags: { a: "1" }, env: { FOO: "bar" } }));
  assert.match(record.id, /^[0-9a-f-]{36}$/);
  assert.match(record.name, /^sh-[0-9a-f]{6}$/);
  assert.is(record.name.slice(3), record.id.slice(0, 6));
  assert.is(record.cwd, work);
  assert.equal(record.tags, { a: "1" });
  assert.equal(record.env, { FOO: "bar" });
  assert.is(record.generation, 1);
  assert.is(record.holderPid, null);
  assert.is(record.childPid, null);
  assert.is(record.exitedAt, null);
  assert.is(record.log, sessionFiles(root, record.id).log);
  assert.equal(readRecord(root, record.id), record);
  assert.is(sessionState(root, record), "starting");
}));

test("createSession refuses a name already on record", inSessionDir(async ({ root, work }) => {
  const first = await createSession(root, shell("exit 0", { cwd: work, name: "repro1" }));
  const error = await rejection(createSession(root, shell("exit 1", { cwd: work, name: "repro1" })));
  assert.instance(error, PreconditionError);
  assert.match((error as Error).message, /A session named "repro1" is already on record/);
  assert.equal(listRecords(root), [first]);
}));

test("createSession: two at once asking for one name, only one gets it", inSessionDir(async ({ root, work }) => {
  const results = await Promise.allSettled([
    createSession(root, shell("exit 0", { cwd: work, name: "twin" })),
    createSession(root, shell("exit 0", { cwd: work, name: "twin" })),
  ]);
  assert.equal(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
  assert.is(listRecords(root).length, 1);
}));

test("createSession refuses a working directory that does not exist or is a file", inSessionDir(async ({ root, work }) => {
  const missing = await rejection(createSession(root, shell("exit 0", { cwd: join(work, "missing") })));
  assert.instance(missing, PreconditionError);
  assert.match((missing as Error).message, /Working directory ".*missing" does not exist/);
  writeFileSync(join(work, "file"), "");
  assert.instance(await rejection(createSession(root, shell("exit 0", { cwd: join(work, "file") }))), PreconditionError);
  assert.equal(readdirSync(root), []);
}));

test("createSession refuses --permanent with --ephemeral as a usage error", inSessionDir(async ({ root, work }) => {
  const error = await rejection(createSession(root, shell("exit 0", { cwd: work, permanent: true, ephemeral: true })));
  assert.instance(error, UsageError);
  assert.match((error as Error).message, /--permanent and --ephemeral/);
  assert.equal(readdirSync(root), []);
}));

test("createSession refuses a name that is not a plain word", inSessionDir(async ({ root, work }) => {
  for (const name of ["", "-x", "a b", "../up", "x".repeat(65)]) {
    assert.instance(await rejection(createSession(root, shell("exit 0", { cwd: work, name }))), UsageError, `name ${JSON.stringify(name)}`);
  }
  assert.ok(await createSession(root, shell("exit 0", { cwd: work, name: "A1._-z" })));
}));

test("createSession takes an id chosen before the start, refusing one that is not a UUID or is already on record", inSessionDir(async ({ root, work }) => {
  const id = "3f2a9c4e-1b7d-4e2a-9c1f-0a2b3c4d5e6f";
  const record = await createSession(root, shell("exit 0", { cwd: work, id }));
  assert.is(record.id, id);
  assert.is(readRecord(root, id)?.id, id);
  const again = await rejection(createSession(root, shell("exit 0", { cwd: work, id })));
  assert.instance(again, PreconditionError);
  assert.match((again as Error).message, `A session with id "${id}" is already on record`);
  for (const bad of ["not-a-uuid", id.toUpperCase(), `${id}x`, "../x"]) {
    assert.instance(await rejection(createSession(root, shell("exit 0", { cwd: work, id: bad }))), UsageError, `id ${JSON.stringify(bad)}`);
  }
  assert.is(listRecords(root).length, 1);
}));

// --- holdSession in this process ("tee")

test("holdSession records pids and start times, the exit code and a start and exit event", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("sleep 0.1; exit 3", { cwd: work, tags: { keep: "true" } }));
  let startedPid = 0;
  const result = await holdSession(root, record.id, "tee", (outcome) => { if ("pid" in outcome) startedPid = outcome.pid; });
  assert.is(result.code, 3);
  assert.is(result.signal, null);
  assert.is(result.reaped, false);
  assert.is(exitCodeOf(result), 3);
  const after = readRecord(root, record.id)!;
  assert.equal(result.record, after);
  assert.is(after.holderPid, process.pid);
  assert.is(after.holderStartedAt, identify(process.pid).started_at);
  assert.is(after.childPid, startedPid);
  assert.ok(after.childStartedAt && !Number.isNaN(Date.parse(after.childStartedAt)), "the child's start time is recorded");
  assert.is(after.childPgid, null, "a foreground child stays in the terminal's process group");
  assert.is(after.exitCode, 3);
  assert.is(after.exitSignal, null);
  assert.is(after.ended, "exited");
  assert.ok(after.exitedAt);
  assert.is(sessionState(root, after), "exited");
  const events = readSessionEvents(root, record.id);
  assert.equal(events.map((e) => e.kind), ["start", "exit"]);
  assert.is(events[0].childPid, startedPid);
  assert.is(events[1].code, 3);
  assert.is(events[1].ended, "exited");
}));

test("holdSession reaps a session that ends by itself, unkept: no file of it is left", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("exit 0", { cwd: work }));
  const result = await holdSession(root, record.id, "tee");
  assert.is(result.reaped, true);
  assert.is(result.code, 0);
  assert.is(result.record?.ended, "exited");
  assert.equal(filesOf(root, record.id), []);
}));

test("holdSession reaps a non-zero exit too, and passes its code on", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("exit 7", { cwd: work }));
  const result = await holdSession(root, record.id, "tee");
  assert.is(exitCodeOf(result), 7);
  assert.is(result.reaped, true);
  assert.equal(filesOf(root, record.id), []);
}));

test("holdSession records a signal it did not send as a crash; exitCodeOf gives 128 + n", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("kill -TERM $$", { cwd: work, tags: { keep: "1" } }));
  const result = await holdSession(root, record.id, "tee");
  assert.is(result.code, null);
  assert.is(result.signal, "SIGTERM");
  assert.is(exitCodeOf(result), 143);
  const after = readRecord(root, record.id)!;
  assert.is(after.ended, "crashed");
  assert.is(after.exitSignal, "SIGTERM");
  assert.is(after.exitCode, null);
}));

test("holdSession reaps an unkept crash", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("kill -KILL $$", { cwd: work }));
  const result = await holdSession(root, record.id, "tee");
  assert.is(result.signal, "SIGKILL");
  assert.is(exitCodeOf(result), 137);
  assert.is(result.record?.ended, "crashed");
  assert.is(result.reaped, true);
  assert.equal(filesOf(root, record.id), []);
}));

test("holdSession keeps a session tagged keep at spawn, with any keeping value", inSessionDir(async ({ root, work }) => {
  for (const keep of ["true", "yes", "1", "until-friday"]) {
    const record = await createSession(root, shell("exit 0", { cwd: work, tags: { keep } }));
    const result = await holdSession(root, record.id, "tee");
    assert.is(result.reaped, false, `keep=${keep}`);
    assert.ok(readRecord(root, record.id)?.exitedAt, `keep=${keep} leaves the record`);
  }
}));

test("holdSession reaps a session tagged keep=false / 0 / no / OFF", inSessionDir(async ({ root, work }) => {
  for (const keep of ["false", "0", "no", " OFF "]) {
    const record = await createSession(root, shell("exit 0", { cwd: work, tags: { keep } }));
    const result = await holdSession(root, record.id, "tee");
    assert.is(result.reaped, true, `keep=${JSON.stringify(keep)}`);
    assert.equal(filesOf(root, record.id), []);
  }
}));

test("holdSession reads keep from disk at exit: keep added while running is honoured", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("sleep 0.2", { cwd: work }));
  let tagging: Promise<unknown> = Promise.resolve();
  const result = await holdSession(root, record.id, "tee", () => {
    tagging = update(root, record.id, (r) => ({ ...r, tags: { ...r.tags, keep: "true" } }));
  });
  await tagging;
  assert.is(result.reaped, false);
  const after = await exitRecorded(root, record.id);
  assert.is(after.tags.keep, "true");
  assert.is(after.ended, "exited");
}));

test("holdSession: keep taken back while running (keep=off) reaps at exit", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("sleep 0.2", { cwd: work, tags: { keep: "true" } }));
  const result = await holdSession(root, record.id, "tee", () => {
    void update(root, record.id, (r) => ({ ...r, tags: { ...r.tags, keep: "off" } }));
  });
  assert.is(result.reaped, true);
  assert.equal(filesOf(root, record.id), []);
}));

test("holdSession keeps a permanent session at exit", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("exit 4", { cwd: work, permanent: true }));
  const result = await holdSession(root, record.id, "tee");
  assert.is(result.reaped, false);
  assert.is(readRecord(root, record.id)?.exitCode, 4);
}));

test("holdSession: keep beats --ephemeral", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("exit 0", { cwd: work, ephemeral: true, tags: { keep: "yes" } }));
  assert.is((await holdSession(root, record.id, "tee")).reaped, false);
  assert.ok(readRecord(root, record.id));
}));

test("holdSession spools a worker's exit record before reaping it", inSessionDir(async ({ root, state, work }) => {
  const record = await createSession(root, shell("exit 5", { cwd: work, name: "ra-demo-42", tags: { ra_item: "42" } }));
  const result = await holdSession(root, record.id, "tee");
  assert.is(result.reaped, true);
  assert.equal(filesOf(root, record.id), [], "the session's files are gone");
  const spooled = join(state, "spool", `${record.id}.1.json`);
  assert.ok(existsSync(spooled), "the exit record is in the spool");
  const { ran_seconds: ran, ...exit } = JSON.parse(readFileSync(spooled, "utf8"));
  assert.equal(exit, {
    session_id: record.id, name: "ra-demo-42", item: "42", generation: 1, ended: "exited", code: 5, signal: null,
    at: result.record!.exitedAt, command: "sh",
  }, "it printed nothing, so no last lines");
  assert.ok(typeof ran === "number" && ran >= 0 && ran < 10, `how long it ran, on the holder's clock: ${ran}`);
  assert.equal(readdirSync(join(state, "spool")), [`${record.id}.1.json`], "no temp file is left in the spool");
}));

test("holdSession spools a worker's last 20 lines and how long it really ran, whatever robot-army's clock says", inSessionDir(async ({ root, state, work }) => {
  const script = 'for n in $(seq 1 25); do echo "line $n"; done; echo "RA_PROMPT_FILE is not set" >&2; exit 1';
  const record = await createSession(root, shell(script, { cwd: work, tags: { ra_item: "9" } }));
  const before = process.env.RA_NOW;
  process.env.RA_NOW = "2026-01-15T10:00:00Z";
  try {
    await holdSession(root, record.id, "log");
  } finally {
    if (before === undefined) delete process.env.RA_NOW;
    else process.env.RA_NOW = before;
  }
  const exit = JSON.parse(readFileSync(join(state, "spool", `${record.id}.1.json`), "utf8"));
  assert.equal(exit.last_lines, [...Array.from({ length: 19 }, (_, i) => `line ${i + 7}`), "RA_PROMPT_FILE is not set"]);
  assert.ok(exit.ran_seconds >= 0 && exit.ran_seconds < 10, `ran ${exit.ran_seconds} s`);
  const slow = await createSession(root, shell("sleep 1.2; echo done", { cwd: work, tags: { ra_item: "9" } }));
  await holdSession(root, slow.id, "log");
  const slowExit = JSON.parse(readFileSync(join(state, "spool", `${slow.id}.1.json`), "utf8"));
  assert.ok(slowExit.ran_seconds >= 1.1, `a second and more is measured as such: ${slowExit.ran_seconds}`);
  assert.equal(slowExit.last_lines, ["done"]);
}));

test("holdSession spools a worker's crash with its signal", inSessionDir(async ({ root, state, work }) => {
  const record = await createSession(root, shell("kill -KILL $$", { cwd: work, tags: { ra_item: "7" } }));
  await holdSession(root, record.id, "tee");
  const exit = JSON.parse(readFileSync(join(state, "spool", `${record.id}.1.json`), "utf8"));
  assert.is(exit.ended, "crashed");
  assert.is(exit.code, null);
  assert.is(exit.signal, "SIGKILL");
  assert.is(exit.item, "7");
}));

test("holdSession: a session that is not a worker writes nothing to the spool", inSessionDir(async ({ root, state, work }) => {
  const record = await createSession(root, shell("exit 0", { cwd: work }));
  await holdSession(root, record.id, "tee");
  assert.not.ok(existsSync(join(state, "spool")));
}));

test("holdSession gives the child its cwd, the --env variables and its session id and name", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell('printf "%s|%s|%s|%s" "$RA_SESSION_ID" "$RA_SESSION_NAME" "$FOO" "$(pwd)" > seen', {
    cwd: work, name: "envy", env: { FOO: "bar baz" },
  }));
  await holdSession(root, record.id, "tee");
  assert.is(readFileSync(join(work, "seen"), "utf8"), `${record.id}|envy|bar baz|${work}`);
}));

test("holdSession puts the folder RA_PATH_FIRST names first on the child's PATH, before the PATH the holder has", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell('printf "%s" "$PATH" > seen', { cwd: work, env: { RA_PATH_FIRST: "/opt/ra/bin" } }));
  await holdSession(root, record.id, "tee");
  assert.is(readFileSync(join(work, "seen"), "utf8"), `/opt/ra/bin:${process.env.PATH}`);
}));

test("holdSession: a command that does not exist failed to start, code 127, record kept", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, { command: "ra-no-such-command-xyz", args: [], cwd: work });
  let outcome: unknown;
  const result = await holdSession(root, record.id, "tee", (o) => { outcome = o; });
  assert.is(result.code, 127);
  assert.is(result.reaped, false);
  assert.ok(outcome && typeof outcome === "object" && "error" in outcome, "the starter hears the error");
  const after = readRecord(root, record.id)!;
  assert.is(after.ended, "failed-to-start");
  assert.match(after.startError ?? "", /ENOENT/);
  assert.ok(after.exitedAt);
  assert.is(after.childPid, null);
  assert.equal(readSessionEvents(root, record.id).map((e) => e.kind), ["exit"]);
}));

test("holdSession: a session removed while it runs (session rm) is not written again", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("sleep 0.2", { cwd: work }));
  const result = await holdSession(root, record.id, "tee", () => removeSessionFiles(root, record.id));
  assert.is(result.record, undefined);
  assert.is(result.reaped, true);
  assert.is(result.code, 0);
  assert.equal(filesOf(root, record.id), []);
}));

// --- exitCodeOf and retained

test("exitCodeOf: the child's code, else 128 + the signal's number, else 1", () => {
  assert.is(exitCodeOf({ code: 0, signal: null }), 0);
  assert.is(exitCodeOf({ code: 7, signal: null }), 7);
  assert.is(exitCodeOf({ code: null, signal: "SIGHUP" }), 129);
  assert.is(exitCodeOf({ code: null, signal: "SIGINT" }), 130);
  assert.is(exitCodeOf({ code: null, signal: "SIGKILL" }), 137);
  assert.is(exitCodeOf({ code: null, signal: "SIGSEGV" }), 139);
  assert.is(exitCodeOf({ code: null, signal: "SIGTERM" }), 143);
  assert.is(exitCodeOf({ code: null, signal: "SIGNOPE" }), 1);
  assert.is(exitCodeOf({ code: null, signal: null }), 1);
});

test("retained: keep beats everything; permanent stays; killed stays unless --ephemeral", () => {
  const base = { tags: {}, permanent: false, ephemeral: false, ended: "exited" } as unknown as SessionRecord;
  const r = (overrides: Partial<SessionRecord>) => retained({ ...base, ...overrides });
  assert.is(r({}), false);
  assert.is(r({ ended: "crashed" }), false);
  assert.is(r({ ended: "killed" }), true);
  assert.is(r({ ended: "killed", ephemeral: true }), false);
  assert.is(r({ ended: "killed", ephemeral: true, tags: { keep: "true" } }), true);
  assert.is(r({ ephemeral: true, tags: { keep: "1" } }), true);
  assert.is(r({ tags: { keep: "no" } }), false);
  assert.is(r({ permanent: true }), true);
  assert.is(r({ permanent: true, ended: "crashed" }), true);
});

// --- startDetached: a holder in a process of its own

test("startDetached confirms the start; the record names a live holder and a child in its own group", inSessionDir(async ({ root, work }) => {
  // The child runs on until the test has looked at it (a fixed sleep can end first on a loaded machine).
  const { record, pid } = await startSession(root, shell("echo one; echo two >&2; while [ ! -e go ]; do sleep 0.05; done; echo three", { cwd: work, tags: { keep: "true" } }));
  assert.is(record.childPid, pid);
  assert.ok(record.holderPid && record.holderPid !== process.pid, "the holder is a process of its own");
  assert.is(liveness({ ...holderIdentity(record), pid: record.holderPid! }), "running");
  assert.is(liveness({ ...childIdentity(record), pid }), "running");
  assert.is(record.childPgid, pid, "the holder made a process group for the child");
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  assert.is(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]), pid, "the child leads its own process group");
  assert.is(sessionState(root, record), "running");
  writeFileSync(join(work, "go"), "");
  const after = await exitRecorded(root, record.id);
  assert.is(after.ended, "exited");
  assert.is(after.exitCode, 0);
  assert.equal(after.lastLines, ["one", "two", "three"]);
  assert.is(readFileSync(sessionFiles(root, record.id).log, "utf8"), "one\ntwo\nthree\n");
  await holderGone(record);
}));

test("startDetached confirms a command that exits at once, and its holder reaps it", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell("exit 0", { cwd: work }));
  const { name, id, pid } = await startDetached(root, record.id);
  assert.is(name, record.name);
  assert.is(id, record.id);
  assert.ok(pid > 1);
  await waitFor("the session to be reaped", () => filesOf(root, record.id).length === 0);
  assert.is(liveness({ pid, started_at: null }), "exited");
}));

test("startDetached reports a command that does not exist as a precondition error", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, { command: "ra-no-such-command-xyz", args: ["a"], cwd: work, name: "nope" });
  const error = await rejection(startDetached(root, record.id));
  assert.instance(error, PreconditionError);
  assert.match((error as Error).message, /Session "nope" could not start: .*ENOENT/);
  const after = await exitRecorded(root, record.id);
  assert.is(after.ended, "failed-to-start");
  await holderGone(after);
}));

test("a detached session records a crash by signal, and honours keep added while it runs", inSessionDir(async ({ root, work }) => {
  const { record } = await startSession(root, shell("sleep 0.2; kill -KILL $$", { cwd: work }));
  await update(root, record.id, (r) => ({ ...r, tags: { ...r.tags, keep: "true" } }));
  const after = await exitRecorded(root, record.id);
  assert.is(after.ended, "crashed");
  assert.is(after.exitSignal, "SIGKILL");
  assert.is(after.exitCode, null);
  await holderGone(record);
  assert.ok(readRecord(root, record.id), "kept after the holder is done");
}));

test("a detached worker spools its exit; its files are gone", inSessionDir(async ({ root, state, work }) => {
  const { record } = await startSession(root, shell("sleep 0.1; exit 9", { cwd: work, tags: { ra_item: "12" } }));
  const spooled = join(state, "spool", `${record.id}.1.json`);
  await waitFor("the exit record in the spool", () => existsSync(spooled));
  await holderGone(record);
  assert.equal(filesOf(root, record.id), []);
  const exit = JSON.parse(readFileSync(spooled, "utf8"));
  assert.is(exit.item, "12");
  assert.is(exit.code, 9);
  assert.is(exit.ended, "exited");
}));

test("a worker that exits 0 leaving a background process has not ended: no exit recorded or spooled until the group is empty", inSessionDir(async ({ root, state, work }) => {
  const { record } = await startSession(root, shell("sleep 30 & exit 0", { cwd: work, tags: { ra_item: "12" } }));
  const pgid = record.childPgid!;
  const spooled = join(state, "spool", `${record.id}.1.json`);
  try {
    await waitFor("the command to exit", () => liveness(childIdentity(record) as ProcessIdentity) === "exited", 5_000);
    const waiting = await waitFor("the child's exit noted", () => readRecord(root, record.id)?.childExitedAt ? readRecord(root, record.id) : undefined, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const seen = readRecord(root, record.id)!;
    assert.is(seen.exitedAt, null, "the session has not ended while the sleep runs");
    assert.not.ok(existsSync(spooled), "nor is its exit in the spool");
    assert.is(sessionState(root, seen), "running");
    assert.is(workerRuns(root, seen), true);
    assert.ok(waiting.childExitedAt);
    assert.equal(readSessionEvents(root, record.id).filter((e) => e.kind === "child-exit").map((e) => [e.code, e.members]), [[0, "running"]]);
    assert.is(groupMembers(pgid).length, 1, "the background sleep, and only it");
    process.kill(-pgid, "SIGKILL");
    await waitFor("the exit record in the spool", () => existsSync(spooled), 10_000);
    const exit = JSON.parse(readFileSync(spooled, "utf8"));
    assert.equal([exit.item, exit.ended, exit.code], ["12", "exited", 0], "the child's own exit, recorded once the group emptied");
    await holderGone(record);
    assert.equal(filesOf(root, record.id), [], "reaped as any clean exit");
  } finally {
    if (groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
  }
}));

test("a foreground holder waits, too, for what its command left running in the group it shares, and then records the exit", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, shell(`sleep 1 > "${join(work, "bg.out")}" 2>&1 & exit 0`, { cwd: work, tags: { keep: "true" } }));
  const began = Date.now();
  const result = await holdSession(root, record.id, "tee");
  assert.ok(Date.now() - began >= 900, `returned after ${Date.now() - began} ms, before the background sleep ended`);
  assert.equal([result.code, result.record?.ended], [0, "exited"]);
  assert.ok(result.record?.childExitedAt, "the command's own exit was noted while the holder waited");
  assert.ok(Date.parse(result.record!.exitedAt!) >= Date.parse(result.record!.childExitedAt!));
}));

/** Holds a session in this process ("tee": its child shares this process's group) and resolves once its child runs. */
async function heldHere(root: string, spec: SessionSpec): Promise<{ record: SessionRecord; done: Promise<Awaited<ReturnType<typeof holdSession>>> }> {
  const created = await createSession(root, spec);
  let done!: ReturnType<typeof holdSession>;
  await new Promise<void>((resolve) => {
    done = holdSession(root, created.id, "tee", () => resolve());
  });
  return { record: readRecord(root, created.id)!, done };
}

test("a foreground holder never takes a process its own process started beside its child for one its command started", inSessionDir(async ({ root, work }) => {
  // One process holding two sessions at once, as these tests do: both children share its
  // process group, and the second starts after the first. When the first command ends, the
  // second's still runs in the group; it is none of the first command's doing.
  const first = await heldHere(root, { command: "sleep", args: ["0.3"], cwd: work, name: "first", tags: { keep: "true" } });
  await sleep(30); // a later clock tick than the first child's start, which the group wait measures from
  const second = await heldHere(root, { command: "sleep", args: ["30"], cwd: work, name: "second" });
  try {
    const result = await Promise.race([first.done, sleep(5_000).then(() => undefined)]);
    assert.ok(result, "the first session's exit was recorded while the second's command still ran");
    assert.equal([result.record?.ended, result.record?.membersAtExit], ["exited", undefined]);
    assert.is(childRunning(second.record), true, "the second's command still runs");
    const ended = readRecord(root, first.record.id)!;
    assert.equal(leftRunning(ended), [], "nothing the first command started runs");
    assert.is(commandRuns(ended), false);
    assert.is(workerRuns(root, ended), false);
  } finally {
    await stopSession(root, readRecord(root, second.record.id) ?? second.record);
    await second.done;
    await first.done;
  }
}));

test("session kill stops what a worker left in its group while its holder waits on it, and the exit is recorded killed", inSessionDir(async ({ root, work }) => {
  const { record } = await startSession(root, shell("sleep 30 & exit 0", { cwd: work }));
  const pgid = record.childPgid!;
  try {
    const waiting = await waitFor("the child's exit noted", () => readRecord(root, record.id)?.childExitedAt ? readRecord(root, record.id) : undefined, 5_000);
    assert.is(await stopSession(root, waiting, { graceMs: 2_000 }), "stopped");
    const after = readRecord(root, record.id)!;
    assert.equal([after.ended, after.exitCode], ["killed", 0]);
    assert.is(groupMembers(pgid).length, 0);
    await holderGone(record);
  } finally {
    if (groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
  }
}));

/** Whether a process has a handler installed for SIGHUP (signal 1), from /proc/<pid>/status. */
function catchesSighup(pid: number): boolean {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("SigCgt:"));
  return line !== undefined && (BigInt(`0x${line.slice(7).trim()}`) & 1n) === 1n;
}

test("a detached holder stopped by SIGTERM passes it to its child and records a stop: ended killed, files kept for gc", inSessionDir(async ({ root, work }) => {
  const { record } = await startSession(root, { command: "sleep", args: ["30"], cwd: work });
  // The holder forwards TERM, HUP and INT; once HUP is caught, TERM is too (see the test below for the moment before).
  await waitFor("the holder to forward signals", () => catchesSighup(record.holderPid!));
  process.kill(record.holderPid!, "SIGTERM");
  const after = await exitRecorded(root, record.id);
  assert.is(after.exitSignal, "SIGTERM");
  assert.is(after.ended, "killed", "someone stopped it, as session kill does");
  assert.ok(after.killRequestedAt, "the stop is on record");
  assert.is(liveness({ ...childIdentity(record), pid: record.childPid! }), "exited");
  await holderGone(record);
  assert.ok(readRecord(root, record.id), "not reaped: kept, unkept as it is, for a look and for gc");
  assert.equal(readSessionEvents(root, record.id).filter((e) => e.kind === "kill").map((e) => e.signal), ["SIGTERM"]);
  assert.is(retained(after), true);
}));

test("a detached holder stopped by SIGINT records a stop too; a worker's exit is spooled first, as killed", inSessionDir(async ({ root, state, work }) => {
  const { record } = await startSession(root, { command: "sleep", args: ["30"], cwd: work, tags: { ra_item: "42" } });
  await waitFor("the holder to forward signals", () => catchesSighup(record.holderPid!));
  process.kill(record.holderPid!, "SIGINT");
  const after = await exitRecorded(root, record.id);
  assert.equal([after.ended, after.exitSignal], ["killed", "SIGINT"]);
  await holderGone(record);
  assert.ok(readRecord(root, record.id), "kept for gc");
  const exit = JSON.parse(readFileSync(join(state, "spool", `${record.id}.1.json`), "utf8"));
  assert.equal([exit.item, exit.ended, exit.signal], ["42", "killed", "SIGINT"]);
}));

test("a foreground holder sent SIGTERM records a stop as well, and keeps the files", inSessionDir(async ({ root, work }) => {
  const record = await createSession(root, { command: "sleep", args: ["30"], cwd: work });
  const result = await holdSession(root, record.id, "tee", (started) => {
    if ("pid" in started) process.kill(process.pid, "SIGTERM");
  });
  assert.equal([result.record?.ended, result.signal, result.reaped], ["killed", "SIGTERM", false]);
  assert.ok(readRecord(root, record.id));
}));

test("a detached holder's own child ending on a signal after a HUP is still a crash, reaped: only TERM and INT are a stop", inSessionDir(async ({ root, work }) => {
  const { record } = await startSession(root, { command: "sleep", args: ["30"], cwd: work });
  await waitFor("the holder to forward signals", () => catchesSighup(record.holderPid!));
  process.kill(record.holderPid!, "SIGHUP");
  await holderGone(record);
  assert.is(readRecord(root, record.id), undefined, "reaped at its exit");
}));

test("a holder told to stop as soon as its start is confirmed still passes the signal on and records the exit", inSessionDir(async ({ root, work }) => {
  // The start is confirmed (and the child runs) before the holder forwards signals; a TERM in
  // between ends the holder by default and leaves the child running with no exit recorded.
  const outcomes: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const { record } = await startSession(root, { command: "sleep", args: ["30"], cwd: work, tags: { keep: "true" } });
    process.kill(record.holderPid!, "SIGTERM");
    await holderGone(record);
    const after = readRecord(root, record.id)!;
    const child = { ...childIdentity(record), pid: record.childPid! };
    outcomes.push(after.exitedAt ? `recorded ${after.exitSignal}` : `vanished, child ${liveness(child)}`);
    if (liveness(child) === "running") process.kill(child.pid, "SIGKILL");
    await waitFor(`pid ${child.pid} to end`, () => liveness(child) === "exited");
  }
  assert.equal(outcomes, ["recorded SIGTERM", "recorded SIGTERM", "recorded SIGTERM"]);
}));

test("no test above left a process running", () => {
  assert.equal(leaked, []);
});

test.run();
