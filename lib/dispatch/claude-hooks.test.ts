import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { openJournal } from "../episodes/journal.ts";
import { findOpen } from "../episodes/open-episodes.ts";
import { latestRecords } from "../episodes/records.ts";
import { git, repoTemplate, withTempDir } from "../testing/fixtures.ts";
import { rejects } from "../testing/rejects.ts";
import { CLAUDE_HOOK_EVENTS, CLAUDE_LOCAL_SETTINGS, writeClaudeHooks } from "./claude-hooks.ts";
import { writeWorkerLauncher } from "../boundaries/launchers/worker-bin.ts";

const template = repoTemplate();
test.after(() => template.remove());

interface Place {
  repo: string;
  worktree: string;
  robotArmy: string;
}

/** A repository, a worktree of it on its own branch (as dispatch makes one), and robot-army's launcher in a state dir. */
function inWorktree(fn: (place: Place) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const worktree = join(dir, "worktrees", "issue-3");
    git(repo, "worktree", "add", "--quiet", "-b", "robot-army/issue-3", worktree);
    await fn({ repo, worktree, robotArmy: writeWorkerLauncher(join(dir, "state")) });
  });
}

type Settings = { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string; timeout?: number }[] }[]>; [key: string]: unknown };

function settingsOf(worktree: string): Settings {
  return JSON.parse(readFileSync(join(worktree, CLAUDE_LOCAL_SETTINGS), "utf8"));
}

/** Robot-army's hook command for an event, as the settings file holds it. */
function commandFor(worktree: string, event: string): string {
  const commands = settingsOf(worktree).hooks[event].flatMap((group) => group.hooks.map((hook) => hook.command));
  const ours = commands.filter((command) => command.includes(" episode hook claude "));
  assert.is(ours.length, 1, `one robot-army hook for ${event}`);
  return ours[0];
}

/** The worker's session id: robot-army started Claude Code with `--session-id` it, so its hooks' input names it. */
const SESSION_ID = "0b5c7a52-3c1e-4f6a-9d2e-5a1b2c3d4e5f";

/**
 * Runs the command line the settings file holds for `event` as Claude Code runs a hook: through
 * a shell, in the project (here a folder inside it), with the event's JSON on stdin and a PATH
 * that has no robot-army on it.
 */
function fireHook(place: Place, event: string, fields: Record<string, unknown>, at: string, extraEnv: Record<string, string> = {}) {
  const input = JSON.stringify({
    session_id: SESSION_ID, transcript_path: "/home/owner/.claude/projects/x/0b5c.jsonl",
    cwd: place.worktree, permission_mode: "default", hook_event_name: event, ...fields,
  });
  const cwd = join(place.worktree, "src");
  mkdirSync(cwd, { recursive: true });
  const env: Record<string, string> = { HOME: process.env.HOME ?? "/tmp", PATH: "/usr/bin:/bin", RA_NOW: at, CLAUDE_PROJECT_DIR: place.worktree, ...extraEnv };
  const result = spawnSync("sh", ["-c", commandFor(place.worktree, event)], { cwd, env, input, encoding: "utf8" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function episodeOf(place: Place, key: string) {
  return (await findOpen(await openJournal(place.worktree), key))?.episode;
}

test("the hooks go into the worktree's local settings, merged with the owner's, and the file is git-excluded", () =>
  inWorktree(async (place) => {
    const file = join(place.worktree, CLAUDE_LOCAL_SETTINGS);
    mkdirSync(join(place.worktree, ".claude"));
    const ownerStop = { hooks: [{ type: "command", command: "notify-send done" }] };
    writeFileSync(file, JSON.stringify({ permissions: { allow: ["Bash(npm test)"], defaultMode: "plan" }, hooks: { Stop: [ownerStop] } }));
    const promptDir = join(place.robotArmy, "..", "..", "prompts", "item-3");
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3", sessionId: SESSION_ID, promptDir });
    const settings = settingsOf(place.worktree);
    // The owner's rules stay, first; robot-army adds the commands its prompt names and the prompt's folder, nothing broader.
    assert.equal(settings.permissions, {
      allow: ["Bash(npm test)", "Bash(robot-army episode needs-info:*)", "Bash(robot-army ledger append:*)"], defaultMode: "plan", additionalDirectories: [promptDir],
    }, "the owner's settings stay");
    assert.equal(settings.hooks.Stop[0], ownerStop, "the owner's own Stop hook stays, first");
    assert.equal(Object.keys(settings.hooks).sort(), CLAUDE_HOOK_EVENTS.map((e) => e.event).sort());
    assert.is(settings.hooks.Notification.at(-1)!.matcher, "idle_prompt|permission_prompt|elicitation_dialog|agent_needs_input");
    assert.equal(settings.hooks.SessionEnd, [{ hooks: [{ type: "command", command: `${place.robotArmy} episode hook claude --key item-3 --session ${SESSION_ID}`, timeout: 30 }] }]);
    assert.is(commandFor(place.worktree, "SessionStart"), `${place.robotArmy} episode hook claude --key item-3 --session ${SESSION_ID}`);
    // The worktree's exclude file is the repository's (git's common dir), and the worktree stays clean.
    assert.match(readFileSync(join(place.repo, ".git", "info", "exclude"), "utf8"), "/.claude/settings.local.json");
    assert.is(git(place.worktree, "status", "--porcelain"), "");

    // A later attempt's start replaces robot-army's hooks (a new key) and keeps the owner's.
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3-2", sessionId: SESSION_ID });
    assert.equal(settingsOf(place.worktree).hooks.Stop[0], ownerStop);
    assert.is(commandFor(place.worktree, "Stop"), `${place.robotArmy} episode hook claude --key item-3-2 --session ${SESSION_ID}`);
    const exclude = readFileSync(join(place.repo, ".git", "info", "exclude"), "utf8");
    assert.is(exclude.split("\n").filter((line) => line === "/.claude/settings.local.json").length, 1, "excluded once");
    // Granted once, however often a worker starts.
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3-3", sessionId: SESSION_ID, promptDir });
    assert.equal(settingsOf(place.worktree).permissions, settings.permissions);
  }));

test("settings that are not a JSON object are the owner's to fix: refused, never overwritten", () =>
  inWorktree(async (place) => {
    const file = join(place.worktree, CLAUDE_LOCAL_SETTINGS);
    mkdirSync(join(place.worktree, ".claude"));
    for (const text of ["{ not json", "[1, 2]"]) {
      writeFileSync(file, text);
      const error = await rejects(writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3", sessionId: SESSION_ID }), PreconditionError);
      assert.match(error.message, `Cannot add robot-army's hooks to "${file}"`);
      assert.is(readFileSync(file, "utf8"), text);
    }
    // Permissions in a shape Claude Code would not read are the owner's too.
    for (const permissions of [["Bash(ls)"], { allow: "Bash(ls)" }]) {
      const text = JSON.stringify({ permissions });
      writeFileSync(file, text);
      const error = await rejects(writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3", sessionId: SESSION_ID }), PreconditionError);
      assert.match(error.message, "Cannot add robot-army's permissions");
      assert.is(readFileSync(file, "utf8"), text);
    }
  }));

test("the hooks, run as Claude Code runs them, drive the episode: start, busy, idle, end; never failing the agent", () =>
  inWorktree(async (place) => {
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3", sessionId: SESSION_ID });
    const started = fireHook(place, "SessionStart", { source: "startup", model: "claude-opus-4" }, "2026-01-15T10:00:00Z");
    assert.is(started.code, 0, started.stderr);
    // A new session opens at its prompt: idle until its first prompt arrives.
    assert.is((await episodeOf(place, "item-3"))?.status, "idle");
    fireHook(place, "UserPromptSubmit", { prompt: "Your task is in the file ..." }, "2026-01-15T10:00:01Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "busy");

    assert.is(fireHook(place, "Stop", { stop_hook_active: false }, "2026-01-15T10:05:00Z").code, 0);
    assert.equal({ ...(await episodeOf(place, "item-3")) }.status_changed_at, "2026-01-15T10:05:00Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "idle");
    // The idle prompt a minute later says nothing new: idle still counts from the Stop.
    fireHook(place, "Notification", { message: "Claude is waiting for your input", notification_type: "idle_prompt" }, "2026-01-15T10:06:00Z");
    assert.is((await episodeOf(place, "item-3"))?.status_changed_at, "2026-01-15T10:05:00Z");

    assert.is(fireHook(place, "UserPromptSubmit", { prompt: "and the tests?" }, "2026-01-15T10:07:00Z").code, 0);
    assert.is((await episodeOf(place, "item-3"))?.status, "busy");
    fireHook(place, "Stop", {}, "2026-01-15T10:08:00Z");
    fireHook(place, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_01" }, "2026-01-15T10:09:00Z");
    assert.equal([(await episodeOf(place, "item-3"))?.status, (await episodeOf(place, "item-3"))?.status_changed_at], ["busy", "2026-01-15T10:09:00Z"]);

    // A session restarted by compaction is in the middle of its turn: still busy.
    fireHook(place, "SessionStart", { source: "compact" }, "2026-01-15T10:09:30Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "busy");
    // A resumed session starts again with its episode open, at its prompt: idle, not refused.
    const resumed = fireHook(place, "SessionStart", { source: "resume" }, "2026-01-15T10:11:00Z");
    assert.is(resumed.code, 0);
    assert.not.match(resumed.stderr, "robot-army: episode hook:", "no problem said");
    assert.is(resumed.stdout, "", "nothing on stdout, which Claude Code adds to the model's context at a SessionStart");
    assert.equal([(await episodeOf(place, "item-3"))?.status, (await episodeOf(place, "item-3"))?.status_changed_at], ["idle", "2026-01-15T10:11:00Z"]);

    const ended = fireHook(place, "SessionEnd", { reason: "prompt_input_exit" }, "2026-01-15T10:12:00Z");
    assert.is(ended.code, 0, ended.stderr);
    assert.is(await episodeOf(place, "item-3"), undefined);
    const [entry] = await latestRecords(await openJournal(place.worktree), 1);
    assert.equal([entry?.record?.key, entry?.record?.outcome], ["item-3", "session-ended"]);
    assert.is(git(place.worktree, "status", "--porcelain"), "?? .ai/", "only the episode record, meant to be committed, shows");
  }));

test("another Claude Code in the worktree (the owner's own, a resume by hand) does not drive the worker's episode", () =>
  inWorktree(async (place) => {
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3", sessionId: SESSION_ID });
    fireHook(place, "SessionStart", { source: "startup" }, "2026-01-15T10:00:00Z");
    fireHook(place, "UserPromptSubmit", { prompt: "the task" }, "2026-01-15T10:00:01Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "busy");
    const other = fireHook(place, "Stop", { session_id: "9f9f9f9f-0000-4000-8000-000000000001" }, "2026-01-15T10:05:00Z");
    assert.is(other.code, 0);
    assert.match(other.stderr, "ignored: session 9f9f9f9f-0000-4000-8000-000000000001 is not the worker's");
    assert.is((await episodeOf(place, "item-3"))?.status, "busy", "the worker is still busy: another session stopped, not it");
    fireHook(place, "Stop", {}, "2026-01-15T10:06:00Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "idle");
  }));

test("the worker is known by its managed session, not by the agent's session id: a resumed or forked Claude Code keeps its registry, and its transcript id is noted", () =>
  inWorktree(async (place) => {
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3-2", sessionId: SESSION_ID });
    // What Claude Code reports after --resume <earlier> (--fork-session): a session id that is not the one robot-army gave it.
    const transcript = "7d7d7d7d-0000-4000-8000-000000000002";
    const inWorker = { RA_SESSION_ID: SESSION_ID };
    const started = fireHook(place, "SessionStart", { source: "resume", session_id: transcript }, "2026-01-15T11:00:00Z", inWorker);
    assert.is(started.code, 0, started.stderr);
    assert.not.match(started.stderr, "ignored");
    const opened = await episodeOf(place, "item-3-2");
    assert.equal([opened?.status, opened?.agent_session_id], ["idle", transcript]);
    fireHook(place, "UserPromptSubmit", { prompt: "go on", session_id: transcript }, "2026-01-15T11:01:00Z", inWorker);
    assert.is((await episodeOf(place, "item-3-2"))?.status, "busy");
    fireHook(place, "Stop", { session_id: transcript }, "2026-01-15T11:02:00Z", inWorker);
    assert.equal([(await episodeOf(place, "item-3-2"))?.status, (await episodeOf(place, "item-3-2"))?.agent_session_id], ["idle", transcript]);
    // The same session id outside the worker's managed session (another managed session's agent) is not the worker's.
    fireHook(place, "UserPromptSubmit", { prompt: "x", session_id: transcript }, "2026-01-15T11:03:00Z", { RA_SESSION_ID: "3c3c3c3c-0000-4000-8000-000000000003" });
    assert.is((await episodeOf(place, "item-3-2"))?.status, "idle");
  }));

test("a permission prompt is the worker waiting for its owner: needs_info with its message, answered by the next tool or the response's end; a hook given nonsense exits 0 and says why on stderr", () =>
  inWorktree(async (place) => {
    await writeClaudeHooks(place.worktree, { robotArmy: place.robotArmy, episodeKey: "item-3", sessionId: SESSION_ID });
    const matcher = new RegExp(`^(?:${settingsOf(place.worktree).hooks.Notification.at(-1)!.matcher})$`);
    for (const type of ["idle_prompt", "permission_prompt", "elicitation_dialog", "agent_needs_input"]) assert.ok(matcher.test(type), `Claude Code runs the hook for ${type}`);
    assert.not.ok(matcher.test("auth_success"));
    fireHook(place, "SessionStart", { source: "startup" }, "2026-01-15T10:00:00Z");
    // The PermissionRequest says what for; the notification after it, vaguer, leaves those words in place.
    fireHook(place, "PermissionRequest", { tool_name: "Read", tool_input: { file_path: "/etc/hosts" }, permission_suggestions: [] }, "2026-01-15T10:00:30Z");
    fireHook(place, "Notification", { message: "Claude needs your permission", notification_type: "permission_prompt" }, "2026-01-15T10:00:31Z");
    const read = await episodeOf(place, "item-3");
    assert.equal([read?.status, read?.needs_info_reason, read?.status_changed_at], ["needs_info", "Claude Code asks permission to use Read: /etc/hosts", "2026-01-15T10:00:30Z"]);
    fireHook(place, "PreToolUse", { tool_name: "Read", tool_input: { file_path: "/etc/hosts" }, tool_use_id: "toolu_01" }, "2026-01-15T10:00:40Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "busy");
    // A notification alone still says what it can.
    fireHook(place, "Notification", { message: "Claude needs your permission to use Bash", notification_type: "permission_prompt" }, "2026-01-15T10:01:00Z");
    const asked = await episodeOf(place, "item-3");
    assert.equal([asked?.status, asked?.needs_info_reason, asked?.status_changed_at], ["needs_info", "Claude needs your permission to use Bash", "2026-01-15T10:01:00Z"]);
    fireHook(place, "Notification", { message: "Claude is waiting for your input", notification_type: "idle_prompt" }, "2026-01-15T10:02:00Z");
    assert.is((await episodeOf(place, "item-3"))?.status, "needs_info", "the idle prompt does not answer it");
    fireHook(place, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_02" }, "2026-01-15T10:03:00Z");
    assert.equal([(await episodeOf(place, "item-3"))?.status, (await episodeOf(place, "item-3"))?.needs_info_reason], ["busy", undefined]);
    // Asked again, answered, and the response ends: Stop comes only once the prompt was answered.
    fireHook(place, "Notification", { message: "Claude needs your permission to use Edit", notification_type: "permission_prompt" }, "2026-01-15T10:04:00Z");
    fireHook(place, "Stop", {}, "2026-01-15T10:05:00Z");
    assert.equal([(await episodeOf(place, "item-3"))?.status, (await episodeOf(place, "item-3"))?.status_changed_at], ["idle", "2026-01-15T10:05:00Z"]);
    const command = commandFor(place.worktree, "Stop");
    const broken = spawnSync("sh", ["-c", command], { cwd: place.worktree, input: "not json", encoding: "utf8", env: { PATH: "/usr/bin:/bin", HOME: "/tmp" } });
    assert.is(broken.status, 0);
    assert.match(broken.stderr, "robot-army: episode hook: the Claude Code hook input is not JSON");
    const unknown = spawnSync("sh", ["-c", `${command} --no-such-option`], { cwd: place.worktree, input: "{}", encoding: "utf8", env: { PATH: "/usr/bin:/bin", HOME: "/tmp" } });
    assert.is(unknown.status, 0, "even a usage mistake never blocks the agent");
    assert.match(unknown.stderr, "robot-army: episode hook:");
  }));

test.run();
