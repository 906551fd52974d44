import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import type { Journal } from "./journal.ts";
import { listOpen, openFile } from "./open-episodes.ts";

test("an open episode's file yaml warns about is listed with its problem, and no warning quoting its lines is printed", () => withTempDir(async (dir) => {
  const journal: Journal = { root: dir, excludeFile: join(dir, "exclude"), openDir: join(dir, "open"), ledgerFile: join(dir, "ledger.jsonl"), recordsDir: join(dir, "records") };
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

test.run();
