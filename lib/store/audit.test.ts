import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { runtimeArgv } from "../runtime.ts";
import { identify, liveness } from "../processes.ts";
import { advanceCursor, appendAudit, asActor, auditEffect, intentsWithoutOutcome, lastAuditId, newLogCursor, queryAudit, writerOf } from "./audit.ts";
import { fullScans } from "../testing/query-plans.ts";
import type { AuditRecord } from "./audit.ts";
import { openStore } from "./open.ts";
import type { Store } from "./open.ts";

async function withStore(fn: (store: Store, dir: string) => void | Promise<void>): Promise<void> {
  const dir = makeTempDir();
  const store = await openStore(dir);
  try {
    await fn(store, dir);
  } finally {
    store.close();
    removeTempDir(dir);
  }
}

const AT = "2026-01-15T10:00:00Z";

test("a real effect's intent is synced to the disk before the effect starts; its outcome, and a simulated effect's records, are written unsynced", () =>
  withStore(async (store) => {
    const unsynced: string[] = [];
    const spied: Store = Object.assign(Object.create(store), {
      unsynced: <T>(fn: () => T): T => store.unsynced(() => {
        const record = fn() as AuditRecord;
        unsynced.push(`${record.kind} ${record.phase}`);
        return record as T;
      }),
    });
    const synchronous = () => Object.values({ ...store.db.prepare("PRAGMA synchronous").get() })[0];
    let during: unknown;
    await auditEffect(spied, { kind: "worktree.create", repo: "o/r", item: 1 }, () => (during = synchronous()));
    await auditEffect(spied, { kind: "github.comment", repo: "o/r", item: 1, simulated: true }, () => "would comment");
    await auditEffect(spied, { kind: "github.comment", repo: "o/r", item: 1 }, () => { throw new Error("refused"); }).catch(() => {});
    assert.equal(unsynced, ["worktree.create outcome", "github.comment intent", "github.comment outcome", "github.comment outcome"]);
    assert.is(during, 2, "the effect runs with every commit synced again");
    assert.equal(queryAudit(store, {}).map((r) => `${r.kind} ${r.phase}`), [
      "worktree.create intent", "worktree.create outcome", "github.comment intent", "github.comment outcome", "github.comment intent", "github.comment outcome",
    ]);
  }));

function seed(store: Store): void {
  appendAudit(store, { at: "2026-01-15T08:00:00Z", kind: "state.work_item", repo: "o/r", item: 12, body: { from: "discovered", to: "ready" } });
  appendAudit(store, { at: "2026-01-15T09:00:00Z", kind: "session.recovered", repo: "o/r", item: 12, sessionId: "s-1" });
  appendAudit(store, { at: "2026-01-15T09:30:00Z", kind: "state.work_item", repo: "o/r", item: 13, body: { from: "ready", to: "dispatching" } });
  appendAudit(store, { at: "2026-01-15T10:00:00Z", kind: "statement.other", item: 12 });
  appendAudit(store, { at: "2026-01-15T10:00:00Z", kind: "episode.recovered", episodeId: "e-1" });
}

test("an appended record comes back as stored: plain object, typed fields", async () => {
  await withStore((store) => {
    const record = appendAudit(store, {
      at: AT,
      kind: "state.work_item",
      repo: "o/r",
      item: 12,
      sessionId: "s-1",
      body: { from: "ready", to: "dispatching" },
    });
    const expected: AuditRecord = {
      id: 1,
      at: AT,
      kind: "state.work_item",
      phase: "fact",
      repo: "o/r",
      item: 12,
      sessionId: "s-1",
      episodeId: null,
      actionId: null,
      simulated: false,
      body: { from: "ready", to: "dispatching" },
    };
    assert.equal(record, expected);
    assert.equal(queryAudit(store), [expected]);
    assert.is(Object.getPrototypeOf(queryAudit(store)[0]), Object.prototype);
  });
});

test("records written inside asActor name the actor, through every await of an effect; records outside it name none", async () => {
  await withStore(async (store) => {
    appendAudit(store, { at: AT, kind: "keep.placed", item: 1, body: { by: "terminal" } });
    await asActor("web session 1a2b3c4d from 127.0.0.1", async () => {
      appendAudit(store, { at: AT, kind: "state.work_item", item: 1, body: { to: "ready" } });
      await auditEffect(store, { kind: "session.send", item: 1, body: { length: 3 } }, async () => {
        await new Promise((done) => setTimeout(done, 10));
        return "sent";
      }, (result) => ({ result }));
    });
    // Another caller at the same time, outside it: not the web session's.
    appendAudit(store, { at: AT, kind: "keep.released", item: 1 });
    assert.equal(queryAudit(store).map((r) => [r.kind, r.phase, r.body.actor ?? null]), [
      ["keep.placed", "fact", null],
      ["state.work_item", "fact", "web session 1a2b3c4d from 127.0.0.1"],
      ["session.send", "intent", "web session 1a2b3c4d from 127.0.0.1"],
      ["session.send", "outcome", "web session 1a2b3c4d from 127.0.0.1"],
      ["keep.released", "fact", null],
    ]);
  });
});

test("a record's time defaults to the clock, which RA_NOW fixes", async () => {
  await withStore((store) => {
    const saved = process.env.RA_NOW;
    process.env.RA_NOW = "2026-02-01T12:34:56Z";
    try {
      assert.is(appendAudit(store, { kind: "test.clock" }).at, "2026-02-01T12:34:56Z");
    } finally {
      if (saved === undefined) delete process.env.RA_NOW;
      else process.env.RA_NOW = saved;
    }
  });
});

test("intents and outcomes need an action id; a bad time is refused", async () => {
  await withStore((store) => {
    assert.throws(() => appendAudit(store, { kind: "github.comment", phase: "intent" }), /needs an action id/);
    assert.throws(() => appendAudit(store, { kind: "x", at: "yesterday" }), /"yesterday" is not an ISO time/);
    assert.throws(() => appendAudit(store, { kind: "" }), /needs a kind/);
  });
});

test("the audit table refuses UPDATE and DELETE", async () => {
  await withStore((store) => {
    appendAudit(store, { at: AT, kind: "test.kept", body: { n: 1 } });
    assert.throws(() => store.db.exec("UPDATE audit SET kind = 'test.changed'"), /append-only: UPDATE refused/);
    assert.throws(() => store.db.exec("DELETE FROM audit"), /append-only: DELETE refused/);
    assert.equal(queryAudit(store).map((r) => [r.kind, r.body]), [["test.kept", { n: 1 }]]);
  });
});

test("an outcome without its intent is refused", async () => {
  await withStore((store) => {
    assert.throws(() => appendAudit(store, { kind: "github.comment", phase: "outcome", actionId: "nope" }), /needs the intent/);
  });
});

test("queries filter by time, kind (exact or prefix), item and id, newest last", async () => {
  await withStore((store) => {
    seed(store);
    const ids = (records: AuditRecord[]) => records.map((r) => r.id);
    assert.equal(ids(queryAudit(store)), [1, 2, 3, 4, 5]);
    assert.equal(ids(queryAudit(store, { since: "2026-01-15T09:00:00Z" })), [2, 3, 4, 5]);
    assert.equal(ids(queryAudit(store, { since: new Date("2026-01-15T09:45:00Z") })), [4, 5]);
    assert.equal(ids(queryAudit(store, { kind: "state.work_item" })), [1, 3]);
    assert.equal(ids(queryAudit(store, { kind: "state." })), [1, 3]);
    assert.equal(ids(queryAudit(store, { kind: "state" })), [1, 3], "a prefix is whole words: statement.other is not state.*");
    assert.equal(ids(queryAudit(store, { kind: "state.work" })), [], "nor is a partial word");
    assert.equal(ids(queryAudit(store, { item: 12 })), [1, 2, 4]);
    assert.equal(ids(queryAudit(store, { item: 12, kind: "state" })), [1]);
    assert.equal(ids(queryAudit(store, { afterId: 3 })), [4, 5]);
  });
});

test("a limit keeps the newest records, still printed oldest first", async () => {
  await withStore((store) => {
    seed(store);
    assert.equal(queryAudit(store, { limit: 2 }).map((r) => r.id), [4, 5]);
    assert.equal(queryAudit(store, { limit: 1, item: 12 }).map((r) => r.id), [4]);
    assert.equal(queryAudit(store, { limit: 10 }).length, 5);
  });
});

test("an effect writes an intent before it runs and an outcome after, sharing one action id", async () => {
  await withStore(async (store) => {
    let seenDuringEffect: AuditRecord[] = [];
    const result = await auditEffect(
      store,
      { kind: "github.comment", repo: "o/r", item: 12, simulated: true, body: { comment: "claimed" } },
      (actionId) => {
        seenDuringEffect = queryAudit(store);
        return { id: 99, actionId };
      },
      (comment) => ({ comment_id: comment.id }),
    );
    const [intent, outcome] = queryAudit(store);
    assert.equal(seenDuringEffect, [intent], "the intent is on disk before the effect starts");
    assert.is(result.actionId, intent.actionId);
    assert.match(String(intent.actionId), /^[0-9a-f-]{36}$/);
    assert.is(outcome.actionId, intent.actionId);
    assert.equal([intent.phase, outcome.phase], ["intent", "outcome"]);
    assert.equal([intent.kind, outcome.kind, outcome.repo, outcome.item, outcome.simulated], ["github.comment", "github.comment", "o/r", 12, true]);
    assert.equal(intent.body, { comment: "claimed", writer: identify(process.pid) }, "the intent names the process that wrote it");
    assert.equal(writerOf(intent), identify(process.pid));
    assert.equal(outcome.body, { ok: true, comment_id: 99 });
    assert.equal(intentsWithoutOutcome(store), []);
  });
});

test("an effect that throws gets an outcome with the error, and the error is rethrown", async () => {
  await withStore(async (store) => {
    try {
      await auditEffect(store, { kind: "worktree.create", repo: "o/r", item: 12 }, async () => {
        throw new Error("remote refused");
      });
      assert.unreachable("the error was swallowed");
    } catch (error) {
      assert.is((error as Error).message, "remote refused");
    }
    const [intent, outcome] = queryAudit(store);
    assert.is(outcome.actionId, intent.actionId);
    assert.equal(outcome.body, { ok: false, error: "remote refused" });
  });
});

test("an effect is refused inside a transaction, whose rollback could take the intent with it", async () => {
  await withStore(async (store) => {
    let error: unknown;
    store.transaction(() => {
      auditEffect(store, { kind: "github.comment" }, () => 1).catch((e) => (error = e));
    });
    await Promise.resolve();
    assert.match(String(error), /cannot run inside a store transaction/);
    assert.equal(queryAudit(store), []);
  });
});

test("intents without an outcome since a cursor: those written after it and those it must read again; a new cursor (a restart) finds them all", () =>
  withStore((store) => {
    const intent = (id: string) => appendAudit(store, { kind: "github.comment", phase: "intent", actionId: id, at: AT });
    const outcome = (id: string) => appendAudit(store, { kind: "github.comment", phase: "outcome", actionId: id, at: AT });
    const waited = intent("waited");
    const reported = intent("reported");
    intent("settled");
    outcome("settled");
    const cursor = newLogCursor();
    assert.equal(intentsWithoutOutcome(store, cursor).map((r) => r.actionId), ["waited", "reported"], "a new cursor reads the whole log");
    advanceCursor(cursor, lastAuditId(store), [waited.id]);
    assert.equal(intentsWithoutOutcome(store, cursor).map((r) => r.actionId), ["waited"], "only what it must read again: nothing new");
    const fresh = intent("new");
    intent("answered");
    outcome("answered");
    assert.equal(intentsWithoutOutcome(store, cursor).map((r) => r.actionId), ["waited", "new"]);
    outcome("waited");
    assert.equal(intentsWithoutOutcome(store, cursor).map((r) => r.actionId), ["new"], "one given its outcome since is not read again");
    assert.equal(intentsWithoutOutcome(store, newLogCursor()).map((r) => r.actionId), ["reported", "new"], "after a restart every one without an outcome is found");
    assert.equal(intentsWithoutOutcome(store).map((r) => r.id), [reported.id, fresh.id]);
  }));

test("a cursor moves on to the newest record read, never back, and keeps to read again only what it has passed", () => {
  const cursor = newLogCursor();
  advanceCursor(cursor, 10, [4, 12, 4, 2]);
  assert.equal(cursor, { after: 10, again: [2, 4] });
  advanceCursor(cursor, 7, [9]);
  assert.equal(cursor, { after: 10, again: [9] });
});

test("exact kinds, a phase, a cursor: what a reader that comes back every pass asks, each read by an index", () =>
  withStore((store) => {
    const write = (file: string) => {
      appendAudit(store, { kind: "bundle.write", phase: "intent", actionId: file, at: AT });
      return appendAudit(store, { kind: "bundle.write", phase: "outcome", actionId: file, at: AT, body: { ok: true, file } });
    };
    const first = write("first");
    appendAudit(store, { kind: "bundle.writer", at: AT });
    const second = write("second");
    const query = { kinds: ["bundle.write"], phase: "outcome" as const };
    assert.equal(queryAudit(store, query).map((r) => r.id), [first.id, second.id]);
    assert.equal(queryAudit(store, { ...query, cursor: { after: first.id, again: [] } }).map((r) => r.id), [second.id]);
    assert.equal(queryAudit(store, { ...query, cursor: { after: second.id, again: [first.id] } }).map((r) => r.id), [first.id]);
    assert.throws(() => queryAudit(store, { cursor: newLogCursor(), limit: 1 }), /either a cursor's records or the newest N/);
    assert.equal(fullScans(store, (s) => {
      queryAudit(s, { ...query, cursor: { after: 3, again: [1] } });
      intentsWithoutOutcome(s, { after: 3, again: [1] });
    }), [], "the kind's records after the cursor, the intents after it, those to read again by id");
  }));

test("a process that dies between intent and outcome leaves the intent alone, to be found, naming its writer now gone", async () => {
  const dir = makeTempDir();
  try {
    const script = join(dir, "crash.mjs");
    const url = (file: string) => JSON.stringify(pathToFileURL(join(import.meta.dirname, file)).href);
    writeFileSync(script, `
      const { openStore } = await import(${url("open.ts")});
      const { auditEffect } = await import(${url("audit.ts")});
      const store = await openStore(process.argv[2]);
      await auditEffect(store, { kind: "worktree.create", repo: "o/r", item: 7 }, () => {
        process.kill(process.pid, "SIGKILL");
        return new Promise(() => {});
      });
    `);
    const result = spawnSync(runtimeArgv(script)[0], [...runtimeArgv(script).slice(1), join(dir, "state")], { encoding: "utf8" });
    assert.is(result.signal, "SIGKILL", result.stderr);
    const store = await openStore(join(dir, "state"));
    try {
      const records = queryAudit(store);
      assert.equal(records.map((r) => [r.phase, r.kind, r.item]), [["intent", "worktree.create", 7]]);
      assert.equal(intentsWithoutOutcome(store), records);
      const writer = writerOf(records[0])!;
      assert.is(writer.pid, result.pid, "the intent names the process that wrote it");
      assert.ok(writer.started_at && writer.start_id, "by pid plus start time");
      assert.is(liveness(writer), "exited", "and that process is proven gone");
    } finally {
      store.close();
    }
  } finally {
    removeTempDir(dir);
  }
});

test.run();
