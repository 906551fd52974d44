import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import type { Journal } from "./journal.ts";
import { latestRecords, writeRecord } from "./records.ts";
import type { EpisodeRecord } from "./records.ts";

function journalIn(dir: string): Journal {
  const journal = { root: dir, excludeFile: join(dir, "exclude"), openDir: join(dir, "open"), ledgerFile: join(dir, "ledger.jsonl"), recordsDir: join(dir, ".ai/repo/sessions") };
  mkdirSync(journal.recordsDir, { recursive: true });
  return journal;
}

const RECORD: EpisodeRecord = {
  schema: 1, id: "3f2b8c1e-0000-4000-8000-000000000001", key: "w1", host: "box", branch: "main",
  started_at: "2026-01-15T10:00:00Z", ended_at: "2026-01-15T11:00:00Z", outcome: "done",
  start_head: null, end_head: null, commits: [], changed_files: [], written_by: "episode end",
};

test("a record that is a folder, or whose front matter is no record, is a problem among the records, never the end of the listing", () => withTempDir(async (dir) => {
  const journal = journalIn(dir);
  await writeRecord(journal, RECORD, "body");
  // A folder named like a record once ended continuity with EISDIR and a stack trace.
  mkdirSync(join(journal.recordsDir, "2026-01-16T00-00-00Z--folder.md"));
  writeFileSync(join(journal.recordsDir, "2026-01-17T00-00-00Z--list.md"), "---\n- 1\n- 2\n---\n");
  // "abc" was shown as "3 commit(s)": its length.
  writeFileSync(join(journal.recordsDir, "2026-01-18T00-00-00Z--commits.md"), `---\n${JSON.stringify({ ...RECORD, commits: "abc" })}\n---\n`);
  const entries = await latestRecords(journal, 10);
  assert.equal(entries.map((e) => e.problem ?? "ok"), [
    `its front matter is not a record: "commits" is not a list or null`,
    "its front matter is not a record: not a table",
    "is a folder, not a record: move it out of the journal",
    "ok",
  ]);
  assert.equal(entries[3].record, RECORD);
}));

test("front matter yaml warns about is read without printing a warning (yaml's warnings quote the file's lines)", () => withTempDir(async (dir) => {
  const journal = journalIn(dir);
  writeFileSync(join(journal.recordsDir, "2026-01-16T00-00-00Z--tag.md"), "---\nkey: !!js/function secret-line\n---\n");
  const warnings: string[] = [];
  const listener = (warning: Error) => warnings.push(warning.message);
  process.on("warning", listener);
  const [entry] = await latestRecords(journal, 1);
  await new Promise((resolve) => setTimeout(resolve, 0));
  process.off("warning", listener);
  assert.equal(warnings, []);
  assert.is(entry.problem, `its front matter is not a record: "id" is not a string`);
}));

test.run();
