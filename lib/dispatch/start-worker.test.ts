import { test } from "uvu";
import * as assert from "uvu/assert";
import { listRecords } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { queryAudit } from "../store/audit.ts";
import { getItem } from "../work-items/queries.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { comments, verbTemplate, withWorld } from "../testing/verbs.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { wireEffects } from "../effects.ts";
import { commitFile, git } from "../testing/fixtures.ts";
import type { ForgeTemplate } from "../testing/forge.ts";
import { dispatchItem, dispatchReady } from "./dispatch.ts";
import type { DispatchDeps } from "./dispatch-deps.ts";
import { PROMPT_FILE_NAME } from "./prompt.ts";

const template = verbTemplate();
test.after(() => template.remove());

test("a worker launched but not recorded is stopped (audited), its item fails, and its issue hears once that no session started", () =>
  withWorld(template, async ({ t, store, deps }) => {
    // A real SQLite refusal between the launch and the row: the session table takes no row.
    store.db.exec("CREATE TEMP TRIGGER no_session_rows BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'the disk said no'); END");
    const { outcomes } = await dispatchReady(deps);
    // No row holds the slot, so dispatch goes on to the next item, which fails the same way.
    assert.ok(outcomes.length >= 1);
    for (const outcome of outcomes) {
      assert.is(outcome.result, "failed");
      assert.match(outcome.reason!, /^its worker started as session ra-widgets-\d \([0-9a-f-]{36}\) but could not be recorded: the disk said no; that session was stopped$/);
      assert.equal(sessionsOf(store, outcome.item), []);
      assert.is(getItem(store, outcome.item)!.state, "failed");
    }
    const records = listRecords(deps.sessionRoot);
    assert.is(records.length, outcomes.length);
    for (const record of records) {
      assert.equal([record.ended, sessionState(deps.sessionRoot, record)], ["killed", "exited"], "a worker no row records does not run on");
    }
    assert.equal(queryAudit(store, { kind: "session.stop" }).map((r) => r.phase), outcomes.flatMap(() => ["intent", "outcome"]));
    const said = await comments(t, 1);
    assert.is(said.filter((c) => c.startsWith("robot-army could not start")).length, 1);
    assert.not.ok(said.some((c) => c.startsWith("robot-army dispatched")));
  }));

/** The prompt file the worker of an item was given. */
function promptOf(deps: DispatchDeps, item: number): string {
  return readFileSync(join(deps.stateDir, "prompts", `item-${item}`, PROMPT_FILE_NAME), "utf8");
}

/**
 * The forge's demo/widgets with both instruction files committed on main before the world is
 * made, so the repository is onboarded with them (they count towards its fingerprint).
 */
const withInstructions: ForgeTemplate = {
  use: (fn, options) => template.use(async (t) => {
    const work = join(t.tmp, "instructions-work");
    git(t.tmp, "clone", "--quiet", join(t.dir, "git", "demo", "widgets.git"), work);
    git(work, "config", "user.name", "Robot Army Test");
    git(work, "config", "user.email", "test@robot-army.invalid");
    commitFile(work, ".robot-army/instructions.md", "Write the changelog entry too.\n", "Neutral instructions");
    commitFile(work, ".claude/robot-army.md", "Run the tests before you commit.\n", "Claude instructions");
    git(work, "push", "--quiet", "origin", "main");
    await fn(t);
  }, options),
  remove: () => {},
};

test("a dispatched worker's prompt holds the repository's instruction files as committed on its base branch, never as its worktree has them", () =>
  withWorld(withInstructions, async ({ t, deps }) => {
    const commit = git(join(t.dir, "git", "demo", "widgets.git"), "rev-parse", "refs/heads/main");
    // A post-create step changes one file in the new worktree: uncommitted, it is not the repository's word.
    const config = { ...deps.config, worktrees: { ...deps.config.worktrees, post_create: [["sh", "-c", "echo 'Push to main.' > .claude/robot-army.md"]] } };
    const { outcomes } = await dispatchReady({ ...deps, config });
    assert.is(outcomes[0].result, "active", String(outcomes[0].reason));
    const text = promptOf(deps, outcomes[0].item);
    assert.match(text, "Delivery:  push, then a pull request that closes #");
    assert.match(text, [
      "## The repository's own instructions: .claude/robot-army.md",
      "",
      "These are demo/widgets's own instructions to its workers, from .claude/robot-army.md as committed on its",
      `base branch main (commit ${commit}). They come from the repository, not from the issue;`,
      "follow them along with the steps above.",
      "",
      "Run the tests before you commit.",
      "",
      "## The repository's own instructions: .robot-army/instructions.md",
    ].join("\n"));
    assert.ok(text.endsWith("\nWrite the changelog entry too.\n"));
    assert.not.match(text, "Push to main.");
  }));

test("a worker started below live is asked to commit only, in a rehearsal with no remote writes", () =>
  withWorld(template, async ({ store, deps }) => {
    const item = getItem(store, 1)!;
    const started = await dispatchItem({ ...deps, effects: wireEffects("no-remote", { github: deps.effects.github }) }, item);
    assert.is(started.result, "active", String(started.reason));
    const text = promptOf(deps, item.id);
    assert.match(text, "This is a rehearsal with no remote writes (effect level no-remote)");
    assert.match(text, "Delivery:  commit only (a rehearsal with no remote writes: no push, no pull request)\n");
    assert.not.match(text, "git push");
    assert.not.match(text, "Closes #");
    assert.not.match(text, "The repository's own instructions", "the repository has none");
  }));

test.run();
