import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { worktreePath } from "../lib/boundaries/worktrees.ts";
import { dispatchItem, dispatchReady } from "../lib/dispatch/dispatch.ts";
import { gate } from "../lib/dispatch/gate.ts";
import { worktreeRoot } from "../lib/work-items/worktree-root.ts";
import { PreconditionError } from "../lib/errors.ts";
import { notifiableSince } from "../lib/notify/events.ts";
import { listAnomalies } from "../lib/store/anomalies.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { commitFile, git } from "../lib/testing/fixtures.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { verbTemplate, withWorld } from "../lib/testing/verbs.ts";
import type { VerbWorld } from "../lib/testing/verbs.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { command, onboardOptions, run as onboard } from "./onboard.ts";
import { parse } from "../lib/cli.ts";
import { fingerprintOf } from "../lib/repos/fingerprint.ts";
import { getRepoRecord, recordApproval } from "../lib/repos/records.ts";

const template = verbTemplate();
test.after(() => template.remove());

const HOOKED = `${JSON.stringify({
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./.claude/hooks/audit.sh" }] }] },
  permissions: { allow: ["Bash(npm test)"] },
  env: { AUDIT_TOKEN: "not-for-your-eyes" },
}, null, 2)}\n`;

/** Someone with push access lands a commit on demo/widgets' main on the forge; its id. */
function pushToMain(t: TestForge, files: Record<string, string>): string {
  const pusher = join(t.tmp, `pusher-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  git(t.tmp, "clone", "--quiet", join(t.dir, "git", "demo", "widgets.git"), pusher);
  let commit = "";
  for (const [path, content] of Object.entries(files)) commit = commitFile(pusher, path, content, `Change ${path}`);
  git(pusher, "push", "--quiet", "origin", "HEAD:main");
  return commit;
}

/** `robot-army onboard` with these arguments, through its own parser; what it printed, or the refusal. */
async function onboardCommand(w: VerbWorld, ...argv: string[]): Promise<{ out: string; error?: Error }> {
  let out = "";
  try {
    await onboard(onboardOptions(parse(command, argv)), { config: w.config, store: w.store, github: w.deps.github, write: (text) => void (out += text) });
    return { out };
  } catch (error) {
    return { out, error: error as Error };
  }
}

const states = (w: VerbWorld) => [1, 2, 3].map((id) => getItem(w.store, id)!.state);

test("an unchanged repository dispatches as before, and a commit that touches no agent file changes nothing", () =>
  withWorld(template, async (w) => {
    pushToMain(w.t, { "src/app.js": "console.log(1);\n", "CLAUDE.md": "Be brief.\n" });
    const { outcomes } = await dispatchReady(w.deps);
    assert.equal(outcomes[0].result, "active");
    assert.is(getRepoRecord(w.store, "demo/widgets")!.state, "onboarded");
    assert.equal(listAnomalies(w.store), []);
  }));

test("onboarding lists the agent files on origin's base branch with their SHA-256, and says what .claude/settings.json holds", () =>
  withWorld(template, async (w) => {
    const commit = pushToMain(w.t, { ".claude/settings.json": HOOKED, ".claude/hooks/audit.sh": "echo audited\n" });
    const { out } = await onboardCommand(w, "demo/widgets", "--reapprove");
    const lines = out.split("\n");
    assert.ok(lines.includes(`agent files origin/main at ${commit}`), out);
    assert.match(out, /^ {12}\.claude\/hooks\/audit\.sh {2}sha256 [0-9a-f]{64}$/m);
    assert.match(out, /^ {12}\.claude\/settings\.json {3}sha256 [0-9a-f]{64}$/m);
    assert.ok(lines.includes("              hooks: PreToolUse (Bash): ./.claude/hooks/audit.sh"), out);
    assert.ok(lines.includes("              permissions allow: Bash(npm test)"), out);
    assert.ok(lines.includes("              env: AUDIT_TOKEN"), out);
    assert.not.match(out, /not-for-your-eyes/);
    assert.ok(lines.includes("absent      .claude/robot-army.md, .claude/settings.local.json, .codex/config.toml, .codex/hooks.json, .mcp.json, .robot-army/instructions.md"), out);
    assert.not.match(out, /settings .*agent_file/, "the settings line names settings only");
    const record = getRepoRecord(w.store, "demo/widgets")!;
    assert.equal([record.state, record.agent_commit], ["onboarded", commit]);
    assert.match(String(record.fingerprint["agent_file:.claude/settings.json"]), /^[0-9a-f]{64}$/);
  }));

test("a hook added on the base branch withholds dispatch, forced or not, with an anomaly and a notification naming the file; --diff shows it; --reapprove lets it go", () =>
  withWorld(template, async (w) => {
    const approvedAt = getRepoRecord(w.store, "demo/widgets")!.agent_commit!;
    const commit = pushToMain(w.t, { ".claude/settings.json": HOOKED });

    const { outcomes } = await dispatchReady(w.deps);
    const reason = `repository demo/widgets needs reapproval (.claude/settings.json added, on origin/main at ${commit}); ` +
      'review with "robot-army onboard demo/widgets --diff", then approve with "robot-army onboard demo/widgets --reapprove"';
    assert.equal(outcomes.map((o) => [o.issue, o.result, o.reason]), [[1, "waiting", reason], [2, "waiting", reason], [3, "waiting", reason]]);
    assert.equal(states(w), ["ready", "ready", "ready"]);
    assert.equal(await gate(w.deps, getItem(w.store, 1)!, { force: true }), { reason, brake: false, everyItem: false }, "no --force lifts it");
    assert.not.ok(existsSync(worktreePath(worktreeRoot(w.config, w.deps.stateDir), "demo/widgets", 1)));

    const [anomaly, ...more] = listAnomalies(w.store, { open: true });
    assert.equal(more, [], "raised once, however many items it held back");
    assert.equal([anomaly.kind, anomaly.action_id, anomaly.repo], ["agent_files_changed", "demo/widgets", "demo/widgets"]);
    assert.match(anomaly.detail, /\.claude\/settings\.json added/);
    const told = notifiableSince(w.store, 0, { host: "testhost", simulated: false }).found.find((n) => n.event === "anomaly")!;
    assert.equal(told.message.commands, ["robot-army onboard demo/widgets --diff", "robot-army onboard demo/widgets --reapprove", `robot-army anomalies --acknowledge ${anomaly.id}`]);
    assert.match(told.message.text, /agent files changed on its base branch: \.claude\/settings\.json; nothing is dispatched to it until you approve them/);
    const [flagged] = queryAudit(w.store, { kind: "repo.needs_reapproval" });
    assert.is(flagged.body.commit, commit);

    const diff = await onboardCommand(w, "demo/widgets", "--diff");
    assert.is(diff.error, undefined);
    const lines = diff.out.split("\n");
    assert.equal(lines.slice(0, 4), [
      "agent files demo/widgets", `approved    origin/main at ${approvedAt}`, `now         origin/main at ${commit}`, "changed     .claude/settings.json",
    ]);
    assert.ok(lines.includes("+++ b/.claude/settings.json"), diff.out);
    assert.ok(lines.includes('+            "command": "./.claude/hooks/audit.sh"'), diff.out);
    assert.ok(lines.includes('approve     "robot-army onboard demo/widgets --reapprove" approves them as they are now; until then nothing is dispatched to it'));
    assert.is(getRepoRecord(w.store, "demo/widgets")!.state, "needs_reapproval", "--diff records nothing");

    const refused = await onboardCommand(w, "demo/widgets");
    assert.instance(refused.error, PreconditionError);
    assert.match(refused.error!.message, /: \.claude\/settings\.json added; nothing is dispatched to it until "robot-army onboard demo\/widgets --reapprove" \("robot-army onboard demo\/widgets --diff" shows how its agent files changed\)$/);

    const approved = await onboardCommand(w, "demo/widgets", "--reapprove");
    assert.match(approved.out, /^reapproved {2}demo\/widgets: \.claude\/settings\.json added$/m);
    assert.is(getRepoRecord(w.store, "demo/widgets")!.agent_commit, commit);
    assert.equal(listAnomalies(w.store, { unresolved: true }), [], "the approval retracts the anomaly");
    const again = await dispatchReady(w.deps);
    assert.equal(again.outcomes[0].result, "active");
    assert.is(readFileSync(join(again.outcomes[0].session!.worktree, ".claude", "settings.json"), "utf8"), HOOKED, "the worker starts from the approved files");
    const clean = await onboardCommand(w, "demo/widgets", "--diff");
    assert.ok(clean.out.split("\n").includes("changed     none: the agent files are as you approved them"), clean.out);
  }));

test("a repository approved before agent files were fingerprinted is withheld until it is approved again, and says exactly what to run", () =>
  withWorld(template, async (w) => {
    const path = w.config.repos["demo/widgets"].path;
    // As an older robot-army recorded it: the settings alone, no agent commit.
    w.store.db.exec("DELETE FROM repos");
    recordApproval(w.store, "demo/widgets", path, fingerprintOf(await w.deps.github.getRepository("demo/widgets"), path));
    const { outcomes } = await dispatchReady(w.deps);
    assert.equal(outcomes[0].result, "waiting");
    assert.match(outcomes[0].reason!, /^repository demo\/widgets needs reapproval \(agent files never approved \(onboarded before robot-army fingerprinted them\), on origin\/main at [0-9a-f]{40}\); review with "robot-army onboard demo\/widgets --diff", then approve with "robot-army onboard demo\/widgets --reapprove"$/);
    const diff = await onboardCommand(w, "demo/widgets", "--diff");
    assert.ok(diff.out.split("\n").includes("approved    never (onboarded before robot-army fingerprinted agent files): each file is shown whole"), diff.out);
    await onboardCommand(w, "demo/widgets", "--reapprove");
    assert.equal((await dispatchReady(w.deps)).outcomes[0].result, "active");
  }));

test("a push that lands after the gate is caught at dispatch's own fetch: no worktree is made and the item fails naming the file", () =>
  withWorld(template, async (w) => {
    pushToMain(w.t, { ".mcp.json": '{"mcpServers":{"x":{"command":"sh"}}}\n' });
    // The gate is passed by; dispatch's own fetch brings the new commit.
    const outcome = await dispatchItem(w.deps, getItem(w.store, 1)!);
    assert.equal(outcome.result, "failed");
    assert.match(outcome.reason!, /Not started: repository demo\/widgets needs reapproval \(\.mcp\.json added, on origin\/main at [0-9a-f]{40}\)/);
    assert.not.ok(existsSync(worktreePath(worktreeRoot(w.config, w.deps.stateDir), "demo/widgets", 1)));
    assert.is(getRepoRecord(w.store, "demo/widgets")!.state, "needs_reapproval");
    assert.equal(listAnomalies(w.store).map((a) => a.kind), ["agent_files_changed"]);
  }));

test("a base branch that cannot be fetched makes the start wait: unknown agent files are never taken as approved", () =>
  withWorld(template, async (w) => {
    const deps = { ...w.deps, config: { ...w.config, repos: { "demo/widgets": { ...w.config.repos["demo/widgets"], base_branch: "no-such-base" } } } };
    const { outcomes } = await dispatchReady(deps);
    assert.equal(outcomes[0].result, "waiting");
    assert.match(outcomes[0].reason!, /^The agent files of "demo\/widgets" on origin\/no-such-base could not be read: Cannot fetch branch "no-such-base" .*; the start waits until they can be$/s);
    assert.equal(states(w), ["ready", "ready", "ready"]);
  }));

test.run();
