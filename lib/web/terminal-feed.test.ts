import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../run-command.ts";
import { TmuxLauncher } from "../boundaries/launchers/tmux.ts";
import { LauncherTests } from "../testing/launchers.ts";
import type { LauncherDirs } from "../testing/launchers.ts";
import { holderGone, inSessionDir, sleep, trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { holderIdentity, readRecord, sessionFiles } from "../sessions/records.ts";
import { createSession, startDetached } from "../sessions/start.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import { LOG_TAIL_BYTES, NO_RECORD_NOTE, terminalFeed } from "./terminal-feed.ts";
import type { TerminalChunk } from "./terminal-feed.ts";

const processes = trackSessionProcesses(test, { childrenBy: "group" });
const launcherTests = new LauncherTests();

/** The store's row of a work item's session whose managed session is `id`. */
function storedSession(id: string, more: Partial<StoredSession> = {}): StoredSession {
  return {
    id, item: 1, name: "ra-demo-1", host: "test-host", launcher: "process", marker: "ra-demo-1", worktree: "/nonexistent/worktree",
    branch: "ra/1", started_at: "2026-01-01T00:00:00Z", simulated: false, attempt: 1, episode_key: "item-1", ended_at: null,
    end_reason: null, exit_code: null, terminal: null, profile: null, tabs_swept_at: null, ...more,
  };
}

/** Reads a feed until `enough` says so or the feed ends; fails after `timeoutMs`. The feed is stopped after. */
async function readFeed(feed: AsyncIterable<TerminalChunk>, enough: (chunks: TerminalChunk[]) => boolean, timeoutMs = 8_000): Promise<{ chunks: TerminalChunk[]; ended: boolean }> {
  const chunks: TerminalChunk[] = [];
  const iterator = feed[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), Math.max(deadline - Date.now(), 0)));
      const next = await Promise.race([iterator.next(), late]);
      clearTimeout(timer);
      if (next === "late") throw new Error(`The feed did not give what was waited for in ${timeoutMs} ms; it gave ${JSON.stringify(chunks)}`);
      if (next.done) return { chunks, ended: true };
      chunks.push(next.value);
      if (enough(chunks)) return { chunks, ended: false };
    }
  } finally {
    await iterator.return?.();
  }
}

/** Everything a feed wrote on the screen since its last reset. */
function screen(chunks: TerminalChunk[]): string {
  let text = "";
  for (const chunk of chunks) {
    if (chunk.kind === "reset") text = chunk.text;
    if (chunk.kind === "data") text += chunk.text;
  }
  return text;
}

/** What `promise` gives within a second, else a failure. */
async function soon<T>(promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error("Not within a second")), 1_000));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const kinds = (chunks: TerminalChunk[]) => chunks.map((chunk) => chunk.kind);
const upToEnd = () => false;

test("a kept headless session's log: a reset, then its lines as data in order, then a note with its exit, and the feed ends", inSessionDir(async ({ root, work }) => {
  const { record } = await processes.start(root, { command: "sh", args: ["-c", "echo one; sleep 0.4; echo two; sleep 0.4; echo three; exit 3"], cwd: work, tags: { keep: "true" } });
  const signal = new AbortController().signal;
  const { chunks, ended } = await readFeed(terminalFeed(storedSession(record.id), { sessionRoot: root, signal, pollMs: 50 }), upToEnd);
  assert.ok(ended, "the feed ends with the session");
  assert.is(chunks[0].kind, "reset");
  assert.ok(kinds(chunks).includes("data"), `lines written later come as data: ${JSON.stringify(chunks)}`);
  assert.equal(kinds(chunks).slice(1, -1), kinds(chunks).slice(1, -1).map(() => "data"));
  assert.is(screen(chunks), "one\r\ntwo\r\nthree\r\n", "in order, each line end a CR LF");
  assert.equal(chunks.at(-1), { kind: "note", text: "the session ended: its command exited with code 3" });
}));

test("a character whose bytes were written apart arrives whole", inSessionDir(async ({ root, work }) => {
  // "€" is e2 82 ac: its first two bytes, a pause longer than several polls, then its last. Kept, so its
  // record stays and the feed ends on its exit.
  const { record } = await processes.start(root, { command: "sh", args: ["-c", "printf 'price: \\342\\202'; sleep 0.5; printf '\\254 5\\n'"], cwd: work, tags: { keep: "true" } });
  const { chunks } = await readFeed(terminalFeed(storedSession(record.id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 50 }), upToEnd);
  assert.is(screen(chunks), "price: \u20ac 5\r\n");
  assert.ok(chunks.every((chunk) => !chunk.text.includes("\ufffd")), JSON.stringify(chunks));
  assert.ok(chunks.some((chunk) => chunk.kind === "data" && chunk.text.startsWith("\u20ac")), `the character came whole after the pause: ${JSON.stringify(chunks)}`);
  assert.equal(chunks.at(-1), { kind: "note", text: "the session ended: its command exited with code 0" });
}));

test("the output of a session reaped as it exited is read to its end, and the feed says how little it knows", inSessionDir(async ({ root, work }) => {
  // The session writes its last words only once the feed has looked (the gate), then exits and its holder
  // removes its files; the feed's next look comes after all that, so it finds no record and a removed log.
  const gate = join(work, "gate");
  const { record } = await processes.start(root, { command: "sh", args: ["-c", `printf 'first\\n'; while [ ! -e '${gate}' ]; do sleep 0.05; done; printf 'last words\\n'`], cwd: work });
  const log = sessionFiles(root, record.id).log;
  await waitFor("the first line in the log", () => readFileSync(log, "utf8") === "first\n");
  const iterator = terminalFeed(storedSession(record.id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 3_000 })[Symbol.asyncIterator]();
  try {
    assert.equal((await iterator.next()).value, { kind: "reset", text: "first\r\n" });
    writeFileSync(gate, "");
    await holderGone(record);
    assert.throws(() => readFileSync(log), "the session's log went with it");
    assert.equal((await iterator.next()).value, { kind: "data", text: "last words\r\n" }, "read from the log the feed kept open");
    assert.equal((await iterator.next()).value, { kind: "note", text: "the session ended: its record was removed as it exited, so how it ended is not known here" });
    assert.ok((await iterator.next()).done);
  } finally {
    await iterator.return?.();
  }
}));

test("a long log's reset holds its last 64 KiB from a whole line on", inSessionDir(async ({ root, work }) => {
  // 30,000 numbered lines of "<n> é" (about 240 KiB), then the session waits.
  const { record } = await processes.start(root, { command: "sh", args: ["-c", "seq 1 30000 | sed 's/$/ \u00e9/'; exec sleep 30"], cwd: work });
  const log = sessionFiles(root, record.id).log;
  try {
    await waitFor("the whole log", () => readFileSync(log, "utf8").endsWith("30000 \u00e9\n"));
    const { chunks } = await readFeed(terminalFeed(storedSession(record.id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 50 }), (c) => c.length === 1);
    const [reset] = chunks;
    assert.is(reset.kind, "reset");
    assert.ok(Buffer.byteLength(reset.text.replaceAll("\r\n", "\n")) <= LOG_TAIL_BYTES, "no more than the tail");
    const lines = reset.text.split("\r\n");
    assert.is(lines.pop(), "");
    assert.ok(lines.length > 5_000, `most of 64 KiB: ${lines.length} lines`);
    const first = Number(lines[0].split(" ")[0]);
    assert.equal(lines, lines.map((_, i) => `${first + i} \u00e9`), "whole lines, from the first whole one to the last");
    assert.is(lines.at(-1), "30000 \u00e9");
  } finally {
    process.kill(-record.childPgid!, "SIGTERM");
  }
}));

test("a log truncated or replaced is shown afresh with a reset", inSessionDir(async ({ root, work }) => {
  // "after" is written only once the test opens its gate, after the truncation was seen: no timing to miss on a loaded machine.
  const gate = join(work, "gate");
  const { record } = await processes.start(root, { command: "sh", args: ["-c", `echo before; while [ ! -e '${gate}' ]; do sleep 0.05; done; echo after; exec sleep 30`], cwd: work });
  const log = sessionFiles(root, record.id).log;
  // The feed opens once the first line is written: a feed opened before it would start from an empty log.
  await waitFor("the first line", () => readFileSync(log, "utf8") === "before\n");
  const iterator = terminalFeed(storedSession(record.id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 50 })[Symbol.asyncIterator]();
  try {
    assert.equal((await iterator.next()).value, { kind: "reset", text: "before\r\n" });
    truncateSync(log, 0);
    assert.equal((await iterator.next()).value, { kind: "reset", text: "" }, "a shorter log starts again");
    writeFileSync(gate, "");
    assert.equal((await iterator.next()).value, { kind: "data", text: "after\r\n" });
    // Another file in the log's place (another inode), even one as long as what was read.
    writeFileSync(`${log}.new`, "replaced\n");
    renameSync(`${log}.new`, log);
    assert.equal((await iterator.next()).value, { kind: "reset", text: "replaced\r\n" });
  } finally {
    await iterator.return?.();
    process.kill(-record.childPgid!, "SIGTERM");
  }
}));

test("no record yet: a note, then the session's output once it starts", inSessionDir(async ({ root, work }) => {
  const id = globalThis.crypto.randomUUID();
  const iterator = terminalFeed(storedSession(id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 50 })[Symbol.asyncIterator]();
  try {
    assert.equal((await iterator.next()).value, { kind: "note", text: NO_RECORD_NOTE });
    const pending = iterator.next();
    assert.is(await Promise.race([pending, sleep(400).then(() => "nothing yet")]), "nothing yet", "the note is not repeated while nothing changes");
    const created = await createSession(root, { id, command: "sh", args: ["-c", "echo started; exec sleep 30"], cwd: work });
    await startDetached(root, id);
    const record = readRecord(root, created.id)!;
    processes.groups.push(record.childPgid!);
    processes.started.push({ ...holderIdentity(record), pid: record.holderPid! });
    const seen: TerminalChunk[] = [(await pending).value as TerminalChunk];
    while (!screen(seen).includes("started")) seen.push((await iterator.next()).value as TerminalChunk);
    assert.equal(kinds(seen).slice(0, 1), ["reset"], "the session's log, once it is on record");
    process.kill(-record.childPgid!, "SIGTERM");
  } finally {
    await iterator.return?.();
  }
}));

test("a simulated session has nothing to show: one note, and the feed ends", async () => {
  const { chunks, ended } = await readFeed(terminalFeed(storedSession("not-a-session", { simulated: true }), { sessionRoot: "/nonexistent", signal: new AbortController().signal }), upToEnd);
  assert.ok(ended);
  assert.equal(kinds(chunks), ["note"]);
  assert.match(chunks[0].text, "simulated");
});

test("no record left of a session its row says ended: one note, and the feed ends", inSessionDir(async ({ root }) => {
  const ended = storedSession(globalThis.crypto.randomUUID(), { ended_at: "2026-01-01T01:00:00Z", end_reason: "exited", exit_code: 0 });
  const { chunks, ended: over } = await readFeed(terminalFeed(ended, { sessionRoot: root, signal: new AbortController().signal, pollMs: 50 }), upToEnd);
  assert.ok(over);
  assert.equal(chunks, [{ kind: "note", text: NO_RECORD_NOTE }]);
}));

test("stopping the feed while it waits ends it at once, by its signal or by its consumer", inSessionDir(async ({ root }) => {
  const controller = new AbortController();
  const id = globalThis.crypto.randomUUID();
  const byConsumer = terminalFeed(storedSession(id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 60_000 })[Symbol.asyncIterator]();
  const bySignal = terminalFeed(storedSession(id), { sessionRoot: root, signal: controller.signal, pollMs: 60_000 })[Symbol.asyncIterator]();
  assert.is((await byConsumer.next()).value?.kind, "note");
  assert.is((await bySignal.next()).value?.kind, "note");
  const waiting = bySignal.next();
  controller.abort();
  assert.equal(await soon(waiting), { done: true, value: undefined }, "aborting its signal ends it");
  const waitingToo = byConsumer.next();
  await soon(byConsumer.return!());
  assert.equal(await soon(waitingToo), { done: true, value: undefined }, "returning its iterator ends it, not after the minute-long poll");
}));

/** The test's tmux server: its socket in the test's temp dir (`-S`), never the user's. */
const socketOf = (dirs: LauncherDirs) => join(dirs.dir, "tmux.sock");

/** Kills the test's own tmux server, if it runs. */
async function killServer(dirs: LauncherDirs): Promise<void> {
  await runCommand(["tmux", "-S", socketOf(dirs), "kill-server"], dirs.env);
}

test("a session in a tmux pane: its screen as a reset with its colours, again when it changes, a note once the server stopped", launcherTests.in("tmux", async (dirs) => {
  const launcher = new TmuxLauncher({ env: dirs.env, session: "ra-workers", socketPath: socketOf(dirs) });
  const script = "printf '\\033[31mred\\033[0m plain\\n'; sleep 1; printf 'second\\n'; exec sleep 30";
  const launched = await launcher.launch({ item: 1, name: "ra-demo-1", cwd: dirs.work, argv: ["sh", "-c", script], tags: {} });
  launcherTests.note(dirs.root);
  const record = readRecord(dirs.root, launched.sessionId)!;
  assert.equal(record.terminal?.kind, "tmux");
  const feed = terminalFeed(storedSession(launched.sessionId, { launcher: "tmux" }), { sessionRoot: dirs.root, signal: new AbortController().signal, pollMs: 50, env: dirs.env });
  const iterator = feed[Symbol.asyncIterator]();
  const { chunks } = await readFeed({ [Symbol.asyncIterator]: () => ({ next: () => iterator.next() }) }, (c) => screen(c).includes("second"));
  try {
    const [first, second] = chunks;
    assert.is(first.kind, "reset");
    assert.match(first.text, /^\x1b\[31mred\x1b\[(0|39)m plain/, "the colour's escape kept");
    assert.equal(second, { kind: "reset", text: `${first.text}\r\nsecond` }, "rows joined by CR LF, the blank rest of the screen left out");
    await killServer(dirs);
    const after = await readFeed({ [Symbol.asyncIterator]: () => ({ next: () => iterator.next() }) }, upToEnd);
    assert.equal(after.chunks.filter((chunk) => chunk.kind !== "note"), [], "nothing shown after the pane went");
    assert.is(after.chunks[0].text, `nothing to show: its tmux pane ${(record.terminal as { pane: string }).pane} is gone (the tmux server it ran on has stopped)`);
    assert.match(after.chunks.at(-1)!.text, /^the session ended: /);
  } finally {
    await iterator.return?.();
  }
}, killServer));

test("no session process outlived its test", () => {
  assert.equal(processes.leaked, []);
  assert.equal(launcherTests.leaked, []);
});

test.run();
