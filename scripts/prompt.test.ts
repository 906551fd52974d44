import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../lib/config.ts";
import type { Config } from "../lib/config.ts";
import { PreconditionError } from "../lib/errors.ts";
import { commitFile, git, makeGitRepo, withTempDir } from "../lib/testing/fixtures.ts";
import type { EffectLevel } from "../lib/config.ts";
import { makeItem, withStore } from "../lib/testing/items.ts";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { openStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { recordTrust, wordsHash } from "../lib/intake/issue-trust.ts";
import { run } from "./prompt.ts";

async function prompt(config: Config, stateDir: string, store: Store | undefined, id: number, json = false, level: EffectLevel = "live"): Promise<string> {
  let text = "";
  await run({ id, json, level }, { config, stateDir, store, write: (chunk) => (text += chunk) });
  return text;
}

test("prompt <id> prints the item's prompt: issue, ids, branch from the title, worktree under the state dir", () =>
  withStore(async (store, stateDir) => {
    const item = makeItem(store, { issue: 7, title: "Fix the widget's $(pagination)" });
    const text = await prompt(await defaultConfig(), stateDir, store, item.id);
    assert.ok(text.startsWith(`You are working on GitHub issue demo/widgets#7 for robot-army, as work item ${item.id}.\n`));
    assert.match(text, "Title:     Fix the widget's $(pagination)\n");
    assert.match(text, `Work item: ${item.id}\n`);
    assert.match(text, "Branch:    robot-army/issue-7-fix-the-widget-s-pagination\n");
    assert.match(text, `Worktree:  ${join(stateDir, "worktrees", "demo", "widgets", "issue-7")}\n`);
    assert.match(text, `robot-army episode start --key item-${item.id} --client-pid $PPID`);
    assert.match(text, "> Do the thing\n");
    assert.match(text, "Closes #7\n");
  }));

test("prompt --json gives the parts and the prompt; worktrees.root from the config is used", () =>
  withStore(async (store, stateDir) => {
    const item = makeItem(store, { issue: 3, title: "Document it" });
    const base = await defaultConfig();
    const config = { ...base, worktrees: { ...base.worktrees, root: "/srv/trees" } };
    const json = JSON.parse(await prompt(config, stateDir, store, item.id, true));
    assert.equal({ ...json, prompt: undefined }, {
      item: item.id, repo: "demo/widgets", issue: 3, branch: "robot-army/issue-3-document-it",
      worktree: "/srv/trees/demo/widgets/issue-3", episode_key: `item-${item.id}`, sha256: wordsHash(item), held: null, approve: null,
      level: "live", delivery: "pull-request",
      instructions: { base: "(unknown)", commit: null, files: [], unreadable: 'repository "demo/widgets" is not in the config' },
      prompt: undefined,
    });
    assert.is(json.prompt, await prompt(config, stateDir, store, item.id));
  }));

test("a held prompt names the hash of the title and body it shows and the approve command that takes it", () =>
  withStore(async (store, stateDir) => {
    const item = makeItem(store, { issue: 3, title: "Document it" });
    const base = await defaultConfig();
    const config = { ...base, github: { ...base.github, author: "owner" } };
    recordTrust(store, item, { labelledBy: "owner", editedBy: [], renamedBy: ["mallory"], title: item.title, body: item.body }, { author: "owner", label: "robot-army" });
    const command = `robot-army approve ${item.id} --sha256 ${wordsHash(item).slice(0, 12)}`;
    const text = await prompt(config, stateDir, store, item.id);
    assert.match(text, `No worker is started on this prompt: its title was changed by mallory; "robot-army approve ${item.id}" after reading it.\n`);
    assert.match(text, `Once you have read its title and body, this approves exactly them: ${command}\n`);
    const json = JSON.parse(await prompt(config, stateDir, store, item.id, true));
    assert.equal([json.sha256, json.approve], [wordsHash(item), command]);
  }));

test("prompt for an unknown id, or with no database at all, is a precondition error", () =>
  withStore(async (store, stateDir) => {
    const config = await defaultConfig();
    for (const where of [store, undefined]) {
      const error = await prompt(config, stateDir, where, 99).then(() => undefined, (e: Error) => e);
      assert.ok(error instanceof PreconditionError && error.exitCode === 3 && error.message === 'No work item 99; "robot-army status" lists them', String(error));
    }
  }));

test("prompt follows the effect level: at live a push and a pull request, below it commits only in a rehearsal", () =>
  withStore(async (store, stateDir) => {
    const item = makeItem(store, { issue: 4, title: "Tidy up" });
    const config = await defaultConfig();
    const live = await prompt(config, stateDir, store, item.id, false, "live");
    assert.match(live, "git push -u origin HEAD");
    assert.match(live, "Closes #4\n");
    const rehearsal = await prompt(config, stateDir, store, item.id, false, "no-remote");
    assert.match(rehearsal, "This is a rehearsal with no remote writes (effect level no-remote)");
    assert.not.match(rehearsal, "git push");
    assert.not.match(rehearsal, "Closes #4");
    const json = JSON.parse(await prompt(config, stateDir, store, item.id, true, "local"));
    assert.equal([json.level, json.delivery], ["local", "commit"]);
  }));

test("prompt gives the repository's instruction files as committed on origin's base branch, never a working tree's", () =>
  withStore(async (store, stateDir) => {
    const item = makeItem(store, { issue: 6, title: "Add docs" });
    const dir = join(stateDir, "repos");
    const seed = makeGitRepo(join(dir, "seed"));
    const commit = commitFile(seed, ".robot-army/instructions.md", "Keep the changelog.\n", "Instructions");
    git(dir, "clone", "--quiet", seed, "clone");
    const clone = join(dir, "clone");
    // In the clone's working tree only: never the repository's word.
    commitFile(clone, "README.md", "local\n", "A local commit");
    mkdirSync(join(clone, ".claude"));
    writeFileSync(join(clone, ".claude", "robot-army.md"), "Uncommitted.\n");
    const base = await defaultConfig();
    const config: Config = { ...base, repos: { "demo/widgets": { path: clone, base_branch: "main", max_sessions: 1, priority: 0 } } };
    const text = await prompt(config, stateDir, store, item.id);
    assert.match(text, `## The repository's own instructions: .robot-army/instructions.md\n\nThese are demo/widgets's own instructions to its workers, from .robot-army/instructions.md as committed on its\nbase branch main (commit ${commit}).`);
    assert.match(text, "\nKeep the changelog.\n");
    assert.not.match(text, "Uncommitted.");
    assert.not.match(text, ".claude/robot-army.md\n");
    const json = JSON.parse(await prompt(config, stateDir, store, item.id, true));
    assert.equal(json.instructions, { base: "main", commit, files: [{ path: ".robot-army/instructions.md", bytes: 20, truncated: false }], unreadable: null });
  }));

test("robot-army prompt on the real binary: an item's prompt (exit 0), an unknown id (exit 3), a bad id (exit 2)", () =>
  withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    const store = await openStore(stateDir);
    const item = makeItem(store, { issue: 5, title: "Make names case-insensitive" });
    store.close();
    const env = { ...process.env, RA_STATE_DIR: stateDir, XDG_CONFIG_HOME: join(dir, "config"), RA_CONFIG: "", HOME: dir };
    const [command, ...args] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
    const ra = (...argv: string[]) => spawnSync(command, [...args, ...argv], { env, encoding: "utf8", cwd: dir });
    const shown = ra("prompt", String(item.id));
    assert.is(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, "Branch:    robot-army/issue-5-make-names-case-insensitive\n");
    assert.match(shown.stdout, "This is a rehearsal with no remote writes (effect level plan)", "the daemon's level by default");
    const live = ra("prompt", String(item.id), "--effect-level", "live");
    assert.is(live.status, 0, live.stderr);
    assert.match(live.stdout, "Delivery:  push, then a pull request that closes #5\n");
    const loud = ra("prompt", String(item.id), "--effect-level", "loud");
    assert.is(loud.status, 2);
    const unknown = ra("prompt", "99");
    assert.is(unknown.status, 3);
    assert.is(unknown.stdout, "");
    assert.is(unknown.stderr, 'robot-army: No work item 99; "robot-army status" lists them\n');
    const bad = ra("prompt", "twelve");
    assert.is(bad.status, 2);
    assert.match(bad.stderr, 'robot-army: A work item id is a positive whole number such as 12, got "twelve"\n\nUsage: robot-army prompt <id>');
  }));

test.run();
