import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError, UsageError } from "../errors.ts";
import { commitFile, git, repoTemplate, withTempDir } from "../testing/fixtures.ts";
import { journalAt, openJournal, resolveKey, shown } from "./journal.ts";
import { startEpisode } from "./lifecycle.ts";

// Building a repository takes several git calls; each test works in a copy of this one.
const template = repoTemplate();
test.after(() => template.remove());

const NOW = new Date("2026-01-15T10:00:00Z");

function excludeLines(file: string): string[] {
  return readFileSync(file, "utf8").split("\n").filter((line) => line === "/.ai/local/");
}

test("openJournal outside a repository is a precondition error", () =>
  withTempDir(async (dir) => {
    try {
      await openJournal(dir, { forWrite: true });
      assert.unreachable("a plain folder has no journal");
    } catch (error) {
      assert.instance(error, PreconditionError);
      assert.match((error as Error).message, dir);
    }
  }));

test("openJournal from a subfolder places the journal at the repository root", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    commitFile(repo, "src/a.ts", "a\n", "Add a");
    const journal = await openJournal(join(repo, "src"));
    assert.equal(journal, {
      root: repo,
      excludeFile: join(repo, ".git/info/exclude"),
      openDir: join(repo, ".ai/local/state/sessions-open"),
      ledgerFile: join(repo, ".ai/local/state/ledger.jsonl"),
      recordsDir: join(repo, ".ai/repo/sessions"),
    });
    assert.is(shown(journal, journal.ledgerFile), ".ai/local/state/ledger.jsonl");
  }));

test("openJournal only for reading leaves the exclude file alone", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const before = readFileSync(join(repo, ".git/info/exclude"), "utf8");
    await openJournal(repo);
    assert.is(readFileSync(join(repo, ".git/info/exclude"), "utf8"), before);
  }));

test("openJournal for writing adds /.ai/local/ to the exclude file exactly once", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const excludeFile = join(repo, ".git/info/exclude");
    const before = readFileSync(excludeFile, "utf8");
    await openJournal(repo, { forWrite: true });
    await openJournal(repo, { forWrite: true });
    const after = readFileSync(excludeFile, "utf8");
    assert.ok(after.startsWith(before), "what was there stays");
    assert.equal(excludeLines(excludeFile), ["/.ai/local/"]);
  }));

test("openJournal for writing puts its line on a line of its own when the exclude file lacks a final newline", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const excludeFile = join(repo, ".git/info/exclude");
    writeFileSync(excludeFile, "*.log");
    await openJournal(repo, { forWrite: true });
    const lines = readFileSync(excludeFile, "utf8").split("\n");
    assert.is(lines[0], "*.log");
    assert.ok(lines.includes("/.ai/local/"));
  }));

test("openJournal for writing respects an exclude line already written by hand", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const excludeFile = join(repo, ".git/info/exclude");
    writeFileSync(excludeFile, ".ai/local/\n");
    await openJournal(repo, { forWrite: true });
    assert.is(readFileSync(excludeFile, "utf8"), ".ai/local/\n");
  }));

test("an episode's local files never make the repository dirty", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const journal = await openJournal(repo, { forWrite: true });
    await startEpisode(journal, { key: "work", clientPid: process.pid, now: NOW });
    assert.is(git(repo, "status", "--porcelain", "--untracked-files=all"), "");
  }));

test("in a linked worktree the exclude line goes to the common git dir and the worktree stays clean", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const worktree = join(dir, "worktree");
    git(repo, "worktree", "add", "--quiet", "-b", "feature", worktree);
    const journal = await openJournal(worktree, { forWrite: true });
    assert.is(journal.root, worktree);
    assert.is(journal.excludeFile, join(repo, ".git/info/exclude"));
    await openJournal(worktree, { forWrite: true });
    assert.equal(excludeLines(journal.excludeFile), ["/.ai/local/"]);
    await startEpisode(journal, { key: "work", clientPid: process.pid, now: NOW });
    assert.is(git(worktree, "status", "--porcelain", "--untracked-files=all"), "");
    assert.is(git(repo, "status", "--porcelain", "--untracked-files=all"), "");
  }));

test("journalAt places the journal below the root however the root is written", () => {
  for (const [root, base] of [["/w/t1", "/w/t1"], ["/w/t1/", "/w/t1"], ["/w//t1/./x/..", "/w/t1"], ["/", ""]]) {
    const journal = journalAt(root);
    assert.is(journal.root, root);
    assert.is(journal.openDir, `${base}/.ai/local/state/sessions-open`, root);
    assert.is(journal.ledgerFile, `${base}/.ai/local/state/ledger.jsonl`, root);
    assert.is(journal.recordsDir, `${base}/.ai/repo/sessions`, root);
  }
});

test("resolveKey takes --key over $RA_EPISODE_KEY, and the variable when no --key is given", () => {
  assert.is(resolveKey("from-flag", { RA_EPISODE_KEY: "from-env" }), "from-flag");
  assert.is(resolveKey(undefined, { RA_EPISODE_KEY: "from-env" }), "from-env");
  assert.is(resolveKey(undefined, { RA_EPISODE_KEY: "" }), undefined);
  assert.is(resolveKey(undefined, {}), undefined);
});

test("resolveKey accepts letters, digits, dots, underscores and dashes up to 128 characters", () => {
  for (const key of ["a", "9", "issue-42", "ra_repo.12", "A".repeat(128)]) {
    assert.is(resolveKey(key, {}), key);
  }
});

test("resolveKey refuses bad keys from either source, quoting them", () => {
  const bad = ["", "-leading-dash", ".hidden", "has space", "a/b", "../escape", "new\nline", "é", "A".repeat(129)];
  for (const key of bad) {
    assert.throws(() => resolveKey(key, {}), (e: unknown) => e instanceof UsageError && e.message.includes(`"${key}"`), JSON.stringify(key));
  }
  assert.throws(() => resolveKey(undefined, { RA_EPISODE_KEY: "a/b" }), (e: unknown) => e instanceof UsageError);
});

test.run();
