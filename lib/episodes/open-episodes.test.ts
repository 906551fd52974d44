import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { rejects } from "../testing/rejects.ts";
import type { Journal } from "./journal.ts";
import { JournalLinkError } from "./_journal-file.ts";
import { createOpen, findOpen, listOpen, openFile } from "./open-episodes.ts";
import type { Episode } from "./open-episodes.ts";

/** A journal in `dir`, its folders named plainly (no repository needed to read and write open files). */
function journalIn(dir: string): Journal {
  return { root: dir, excludeFile: join(dir, "exclude"), openDir: join(dir, "open"), ledgerFile: join(dir, "ledger.jsonl"), recordsDir: join(dir, "records") };
}

/** An open episode started and changed at 10:00, with what the test sets. */
function episodeOf(fields: Pick<Episode, "id" | "key" | "status"> & Partial<Episode>): Episode {
  return {
    schema: 1, host: "box", client: { pid: 2, started_at: null },
    started_at: "2026-01-15T10:00:00Z", branch: null, start_head: null, status_changed_at: "2026-01-15T10:00:00Z", ...fields,
  };
}

test("an open episode's file yaml warns about is listed with its problem, and no warning quoting its lines is printed", () => withTempDir(async (dir) => {
  const journal = journalIn(dir);
  mkdirSync(journal.openDir);
  writeFileSync(openFile(journal, "w1"), "%YAML 9.9\n---\nid: !!js/function secret-line\n");
  const warnings: string[] = [];
  const listener = (warning: Error) => warnings.push(warning.message);
  process.on("warning", listener);
  const entries = await listOpen(journal);
  await new Promise((resolve) => setTimeout(resolve, 0));
  process.off("warning", listener);
  assert.equal(warnings, []);
  assert.is(entries.length, 1);
  assert.ok(entries[0].problem && !entries[0].episode, JSON.stringify(entries[0]));
}));

test("an open episode whose file names another key is a problem, never that other episode", () => withTempDir(async (dir) => {
  // Read as w2, episode end --key w1 removed w2.yaml, the other episode's file, and left w1.yaml open.
  const journal = journalIn(dir);
  const episode = episodeOf({ id: "3f2b8c1e-0000-4000-8000-000000000001", key: "w2", status: "busy" });
  mkdirSync(journal.openDir);
  await createOpen(journal, episode);
  writeFileSync(openFile(journal, "w1"), readFileSync(openFile(journal, "w2"), "utf8"));
  const entries = await listOpen(journal);
  assert.equal(entries.map((e) => [e.key, e.problem ?? "ok"]), [["w1", 'names key "w2", not the "w1" its file is named for'], ["w2", "ok"]]);
  assert.is((await findOpen(journal, "w1"))?.episode, undefined);
}));

test("needs_info carries its question and nothing else does: a file saying otherwise is a problem, never a status", () => withTempDir(async (dir) => {
  const journal = journalIn(dir);
  const episode = episodeOf({ id: "3f2b8c1e-0000-4000-8000-000000000002", key: "w1", status: "needs_info", needs_info_reason: "which database?" });
  mkdirSync(journal.openDir);
  await createOpen(journal, episode);
  assert.equal((await findOpen(journal, "w1"))?.episode, episode);
  const text = readFileSync(openFile(journal, "w1"), "utf8");
  const problem = async (edited: string) => {
    writeFileSync(openFile(journal, "w1"), edited);
    const entry = await findOpen(journal, "w1");
    assert.ok(entry?.problem && !entry.episode, edited);
  };
  await problem(text.replace(/^needs_info_reason: .*\n/m, ""));
  await problem(text.replace(/^status: needs_info$/m, "status: busy"));
  await problem(text.replace(/^needs_info_reason: .*$/m, `needs_info_reason: ${"x".repeat(501)}`));
  await problem(text.replace(/^needs_info_reason: .*$/m, 'needs_info_reason: ""'));
  await problem(text.replace(/^status: needs_info$/m, "status: idle").replace(/^needs_info_reason: .*$/m, "needs_info_by: prompt"));
  await problem(text + "needs_info_by: owner\n");
  writeFileSync(openFile(journal, "w1"), text + "needs_info_by: prompt\n");
  assert.is((await findOpen(journal, "w1"))?.episode?.needs_info_by, "prompt");
}));

test("a file read again as it was gives the same episode, each caller its own copy; a file changed in any way is read afresh", () => withTempDir(async (dir) => {
  // The parsed episode is kept by the file's text: the daemon and the dashboard read every worker's file again and again.
  const journal = journalIn(dir);
  const episode = episodeOf({ id: "3f2b8c1e-0000-4000-8000-000000000003", key: "w1", status: "busy" });
  mkdirSync(journal.openDir);
  await createOpen(journal, episode);
  const first = (await findOpen(journal, "w1"))!.episode!;
  first.status = "idle";
  first.client.pid = 99;
  const again = (await findOpen(journal, "w1"))!.episode!;
  assert.equal(again, episode, "what one caller changed is not what the next one reads");
  assert.is.not(again, first);
  // Rewritten in place to the same length, in the same instant (mtime put back): still read afresh.
  const file = openFile(journal, "w1");
  const { mtime } = statSync(file);
  writeFileSync(file, readFileSync(file, "utf8").replace("status: busy", "status: idle"));
  utimesSync(file, mtime, mtime);
  assert.is((await findOpen(journal, "w1"))?.episode?.status, "idle");
  // Made unreadable, then the same as before again: the problem, then the episode.
  const good = readFileSync(file, "utf8");
  writeFileSync(file, good.replace("key: w1", "key: [w1"));
  assert.ok((await findOpen(journal, "w1"))?.problem);
  writeFileSync(file, good);
  assert.is((await findOpen(journal, "w1"))?.episode?.status, "idle");
}));

test("findOpen: a missing file or folder is no episode, a folder that is a link is refused, a file that is a link is a problem", () => withTempDir(async (dir) => {
  const journal = journalIn(dir);
  assert.is(await findOpen(journal, "w1"), undefined, "no open folder");
  mkdirSync(journal.openDir);
  assert.is(await findOpen(journal, "w1"), undefined, "no file");
  writeFileSync(join(dir, "elsewhere.yaml"), "secret: line\n");
  symlinkSync(join(dir, "elsewhere.yaml"), openFile(journal, "w1"));
  const entry = await findOpen(journal, "w1");
  assert.ok(entry?.problem?.includes("symbolic link") && !entry.episode, JSON.stringify(entry));
  rmSync(journal.openDir, { recursive: true });
  mkdirSync(join(dir, "outside"));
  symlinkSync(join(dir, "outside"), journal.openDir);
  await rejects(findOpen(journal, "w1"), JournalLinkError, "symbolic link");
  // A part of the path that is a file, not a folder: not taken for missing, said as unreadable.
  rmSync(journal.openDir);
  writeFileSync(journal.openDir, "");
  assert.match((await findOpen(journal, "w1"))?.problem ?? "", /cannot be read/);
}));

test.run();
