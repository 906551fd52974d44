import { test } from "uvu";
import { runCommand } from "../run-command.ts";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import { defaultConfig } from "../config.ts";
import { listRecords } from "../sessions/records.ts";
import { git, makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { stopAll, verbTemplate, withWorld } from "../testing/verbs.ts";
import { waitFor } from "../testing/wait.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { CLAUDE_LOCAL_SETTINGS } from "./claude-hooks.ts";
import { CODEX_HOOK_EVENTS, codexHookCommand, codexHookHash } from "./codex-hooks.ts";
import { dispatchReady } from "./dispatch.ts";
import { codexResumeMessage, taskPointerMessage, workerArgv } from "./profiles.ts";
import { noRegistryLine, resumeCommand } from "../worker-profiles.ts";
import type { ProfileStart } from "./profiles.ts";
import { relaunchItem } from "./verbs/relaunch.ts";

const template = verbTemplate();
test.after(() => template.remove());

const ID = "3f2a9c4e-1b7d-4e2a-9c1f-0a2b3c4d5e6f";
const EARLIER = "0b5c7a52-3c1e-4f6a-9d2e-5a1b2c3d4e5f";
const START: ProfileStart = { sessionId: ID, episodeKey: "item-4", resume: null, robotArmy: "/state/bin/robot-army", worktree: "/w/demo/widgets/issue-4" };

async function worker(overrides: Partial<Config["worker"]>): Promise<Config["worker"]> {
  return { ...(await defaultConfig()).worker, args: ["--model", "opus"], resume_args: ["--continue"], ...overrides };
}

test("claude starts with the session's own id; a resume forks the earlier transcript into it", async () => {
  const claude = await worker({ binary: "claude", profile: "claude" });
  assert.equal(workerArgv(claude, START), ["claude", "--model", "opus", "--session-id", ID]);
  assert.equal(workerArgv(claude, { ...START, resume: { earlier: EARLIER } }), ["claude", "--model", "opus", "--resume", EARLIER, "--fork-session", "--session-id", ID]);
  assert.equal(workerArgv(claude, { ...START, resume: { earlier: null } }), ["claude", "--model", "opus", "--continue", "--fork-session", "--session-id", ID]);
  assert.is(resumeCommand(claude, ID), `claude --resume ${ID}`);
  // Feedback that came while it was stopped: its first message points at the file, the words stay out of argv.
  const resumed = workerArgv(claude, { ...START, resume: { earlier: EARLIER }, feedbackFile: "/state/prompts/item-4/feedback-x.md" });
  assert.equal(resumed.slice(0, -1), ["claude", "--model", "opus", "--resume", EARLIER, "--fork-session", "--session-id", ID]);
  assert.match(resumed.at(-1)!, /^robot-army resumed this session: feedback came .* in the file \/state\/prompts\/item-4\/feedback-x\.md: read it/);
  assert.equal(workerArgv(claude, { ...START, feedbackFile: "/f.md" }), ["claude", "--model", "opus", "--session-id", ID], "a fresh start has it in its prompt");
});

test("codex runs with no shared server and robot-army's hooks, each trusted by its own hash, and the git folders a commit writes; a resume names Codex's own session", async () => {
  const dir = makeTempDir("robot-army-codex-argv-");
  try {
    const clone = join(dir, "clone");
    const wt = join(dir, "issue-4");
    git(dir, "init", "-q", clone);
    git(clone, "commit", "-q", "--allow-empty", "-m", "init");
    git(clone, "worktree", "add", "-q", wt, "-b", "robot-army/issue-4");
    const codex = await worker({ binary: "codex", profile: "codex", resume_args: ["resume", "--last"] });
    // The owner's Codex config gives its sandbox a root of its own, which robot-army's setting keeps.
    mkdirSync(join(dir, "home", ".codex"), { recursive: true });
    writeFileSync(join(dir, "home", ".codex", "config.toml"), '[sandbox_workspace_write]\nwritable_roots = ["/srv/cache"]\n');
    const start = { ...START, worktree: wt, promptFile: "/state/prompts/item-4/prompt.md", env: { HOME: join(dir, "home") } };
    const argv = workerArgv(codex, start);
    assert.equal(argv.slice(0, 4), ["codex", "--model", "opus", "--no-daemon"]);
    assert.is(argv.at(-1), taskPointerMessage("/state/prompts/item-4/prompt.md"), "the first message points at the prompt file");
    const command = codexHookCommand("/state/bin/robot-army", "item-4", ID);
    assert.is(command, `/state/bin/robot-army episode hook codex --key item-4 --session ${ID}`);
    const configs = argv.flatMap((arg, i) => (argv[i - 1] === "-c" ? [arg] : []));
    assert.equal(configs.filter((c) => c.startsWith("hooks.") && !c.startsWith("hooks.state")).map((c) => c.split("=")[0]), CODEX_HOOK_EVENTS.map(({ event }) => `hooks.${event}`));
    assert.ok(configs.includes(`hooks.Stop=[{hooks=[{type="command",command=${JSON.stringify(command)},timeout=30}]}]`));
    assert.ok(configs.includes(`hooks.SessionEnd=[{hooks=[{type="command",command=${JSON.stringify(command)},timeout=3}]}]`), "Codex clamps SessionEnd to 3 s, and a clamped hook's hash is another");
    const state = configs.find((c) => c.startsWith("hooks.state="));
    // The hash Codex 0.171 showed for a Stop hook running "x" with a 30 s timeout, computed by hand from its canonical JSON.
    const expected = `sha256:${createHash("sha256").update(`{"event_name":"stop","hooks":[{"async":false,"command":${JSON.stringify(command)},"timeout":30,"type":"command"}]}`).digest("hex")}`;
    assert.is(codexHookHash("stop", command, 30), expected);
    assert.match(state ?? "", `"/<session-flags>/config.toml:stop:0:0"={trusted_hash="${expected}"}`);
    const common = realpathSync(join(clone, ".git"));
    const roots = configs.find((c) => c.startsWith("sandbox_workspace_write.writable_roots="));
    const added = JSON.parse(roots!.slice("sandbox_workspace_write.writable_roots=".length));
    assert.equal(added, ["/srv/cache", join(common, "worktrees", "issue-4"), join(common, "objects"), join(common, "refs"), join(common, "logs")]);
    assert.not.ok(added.includes(common), "never the whole git folder (its hooks and config)");
    assert.not.ok(argv.includes("--add-dir"), "no --add-dir, which Codex refuses in a folder it does not trust yet");
    const resumed = workerArgv(codex, { ...start, resume: { earlier: EARLIER, agentSession: "01a23b22-1dc4" } });
    assert.equal(resumed.slice(0, 5), ["codex", "resume", "--model", "opus", "--no-daemon"]);
    assert.equal(resumed.slice(-2), ["01a23b22-1dc4", codexResumeMessage("/state/prompts/item-4/prompt.md")], "Codex's own id, and a prompt: Codex reports no start without one");
    assert.is(workerArgv(codex, { ...start, resume: { earlier: EARLIER } }).at(-2), "--last", "with no id on record, the newest session of the worktree");
    assert.is(resumeCommand(codex, ID), "codex resume");
  } finally {
    removeTempDir(dir);
  }
});

test("demo and generic add nothing but resume_args on a resume; only generic has no registry", async () => {
  for (const profile of ["demo", "generic"] as const) {
    const other = await worker({ binary: "aider", profile });
    assert.equal(workerArgv(other, START), ["aider", "--model", "opus"]);
    assert.equal(workerArgv(other, { ...START, resume: { earlier: EARLIER } }), ["aider", "--model", "opus", "--continue"]);
  }
  assert.is(resumeCommand(await worker({ binary: "aider", profile: "generic" }), ID), "aider --model opus --continue");
  assert.is(resumeCommand(await worker({ binary: "aider", profile: "generic", resume_args: [] }), ID), null);
  assert.is(resumeCommand(await worker({ profile: "demo" }), ID), null);
  assert.equal(["claude", "codex", "demo", "generic"].map((p) => noRegistryLine(p as "claude") === null), [true, true, true, false], "codex's hooks are a registry");
});

/** A stand-in for Claude Code: it notes where robot-army is on its PATH and its episode key, then waits. */
function fakeClaude(dir: string): string {
  const file = join(dir, "claude");
  writeFileSync(file, `#!/bin/sh\nprintf '%s %s\\n' "$(command -v robot-army)" "$RA_EPISODE_KEY" >> ${JSON.stringify(join(dir, "seen"))}\nexec sleep 30\n`);
  chmodSync(file, 0o755);
  return file;
}

test("a Claude Code worker is launched with --session-id its session's id, its attempt's key, hooks in its worktree and robot-army on its PATH", async () => {
  const dir = makeTempDir();
  const socket = `ra-profiles-${process.pid}`;
  try {
    const binary = fakeClaude(dir);
    await withWorld(template, async ({ store, deps }) => {
      const first = (await dispatchReady(deps)).outcomes[0].session!;
      const record = listRecords(deps.sessionRoot).find((r) => r.id === first.id)!;
      assert.equal(record.args.slice(0, 4), ["--model", "opus", "--session-id", first.id], "the id robot-army records is the one Claude Code names its transcript by");
      // Its first message points at its prompt file; the issue's words stay out of argv.
      assert.equal(record.args.slice(4), [taskPointerMessage(record.env.RA_PROMPT_FILE)]);
      assert.match(readFileSync(record.env.RA_PROMPT_FILE, "utf8"), "demo/widgets#");
      assert.is(record.env.RA_EPISODE_KEY, "item-1");
      assert.is(sessionsOf(store, 1)[0].episode_key, "item-1");
      const robotArmy = join(deps.stateDir, "bin", "robot-army");
      const settings = JSON.parse(readFileSync(join(first.worktree, CLAUDE_LOCAL_SETTINGS), "utf8"));
      assert.is(settings.hooks.Stop[0].hooks[0].command, `${robotArmy} episode hook claude --key item-1 --session ${first.id}`);
      const seen = () => existsSync(join(dir, "seen")) ? readFileSync(join(dir, "seen"), "utf8") : "";
      await waitFor("the worker's first look around", () => seen().includes("item-1") || undefined);
      assert.is(seen(), `${robotArmy} item-1\n`);

      await stopAll(deps);
      const resumed = await relaunchItem(deps, 1, { how: "resume" });
      const again = listRecords(deps.sessionRoot).find((r) => r.id === resumed.session!.id)!;
      assert.equal(again.args, ["--model", "opus", "--resume", first.id, "--fork-session", "--session-id", resumed.session!.id]);
      assert.is(again.env.RA_EPISODE_KEY, "item-1-2", "a later attempt keeps an episode of its own");
      assert.equal(sessionsOf(store, 1).map((s) => s.episode_key), ["item-1", "item-1-2"]);
      const rewritten = JSON.parse(readFileSync(join(first.worktree, CLAUDE_LOCAL_SETTINGS), "utf8"));
      assert.is(rewritten.hooks.Stop.length, 1, "the earlier attempt's hook was replaced, not added to");
      assert.is(rewritten.hooks.Stop[0].hooks[0].command, `${robotArmy} episode hook claude --key item-1-2 --session ${resumed.session!.id}`);
    // An interactive agent needs a terminal: tmux, on a server of the test's own, ended afterwards.
    }, { binary, profile: "claude", args: ["--model", "opus"], launcher: "tmux", tmux_socket: socket, tmux_session: "workers" });
  } finally {
    await runCommand(["tmux", "-L", socket, "kill-server"], process.env);
    removeTempDir(dir);
  }
});

test.run();
