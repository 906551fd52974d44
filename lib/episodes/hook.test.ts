import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { PROJECT_ROOT, runtimeArgv } from "../runtime.ts";
import { repoTemplate, withTempDir } from "../testing/fixtures.ts";
import { rejects } from "../testing/rejects.ts";
import { applyHook, claudeHookEvent, codexHookEvent, permissionWords } from "./hook.ts";
import { openJournal } from "./journal.ts";
import { readLedger } from "./ledger.ts";
import type { Journal } from "./journal.ts";
import { findOpen, openFile } from "./open-episodes.ts";

const template = repoTemplate();
test.after(() => template.remove());

const T = (minute: number) => new Date(`2026-01-15T10:${String(minute).padStart(2, "0")}:00Z`);

function inRepo(fn: (repo: string, journal: Journal) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const repo = template.copy(dir);
    await fn(repo, await openJournal(repo, { forWrite: true }));
  });
}

test("Claude Code's events map to start, busy, idle, needs_info and end; anything else does nothing", () => {
  const action = (input: unknown) => claudeHookEvent(input).action;
  assert.is(action({ hook_event_name: "SessionStart", source: "startup" }), "start");
  assert.is(action({ hook_event_name: "UserPromptSubmit", prompt: "go" }), "busy");
  assert.is(action({ hook_event_name: "PreToolUse", tool_name: "Bash" }), "busy");
  assert.is(action({ hook_event_name: "Stop" }), "idle");
  assert.is(action({ hook_event_name: "Notification", notification_type: "idle_prompt" }), "idle");
  assert.is(action({ hook_event_name: "Notification", notification_type: "permission_prompt" }), "needs_info");
  assert.is(action({ hook_event_name: "Notification", notification_type: "elicitation_dialog" }), "needs_info");
  // Auto mode's safety check out of reach: Claude Code stops at a dialog only the owner can answer.
  assert.is(action({ hook_event_name: "Notification", notification_type: "agent_needs_input" }), "needs_info");
  assert.equal(claudeHookEvent({ hook_event_name: "Notification", notification_type: "agent_needs_input", message: "Auto mode can't check actions in this session and needs your choice" }).reason, "Auto mode can't check actions in this session and needs your choice");
  assert.equal(claudeHookEvent({ hook_event_name: "Notification", notification_type: "agent_needs_input" }).reason, "Claude Code needs your choice", "with no message, what the type means");
  assert.is(action({ hook_event_name: "Notification", notification_type: "auth_success" }), "none");
  assert.is(action({ hook_event_name: "Notification", notification_type: "toString" }), "none", "no inherited name passes for a type");
  assert.equal(claudeHookEvent({ hook_event_name: "Notification", notification_type: "permission_prompt", message: "Claude needs your permission to use Bash" }).reason, "Claude needs your permission to use Bash");
  assert.equal(claudeHookEvent({ hook_event_name: "Notification", notification_type: "elicitation_dialog", message: " " }).reason, "Claude Code asks you a question", "with no message, what the type means");
  assert.is(claudeHookEvent({ hook_event_name: "Notification", notification_type: "idle_prompt", message: "waiting" }).reason, undefined);
  assert.is(action({ hook_event_name: "Notification" }), "none", "a notification of no known type is not idleness");
  assert.is(action({ hook_event_name: "SessionEnd", reason: "other" }), "end");
  assert.is(action({ hook_event_name: "PostToolUse" }), "none");
  assert.is(action([]), "none");
  assert.equal(claudeHookEvent({ hook_event_name: "Stop", cwd: "/w" }), { action: "idle", event: "Stop", cwd: "/w", turnEnded: true });
  assert.is(claudeHookEvent({ hook_event_name: "Notification", notification_type: "idle_prompt" }).turnEnded, undefined, "the idle prompt is no end of a turn");
});

test("Codex's hooks, as Codex 0.171 sends them: start, busy on a prompt or a tool, needs_info in the permission's words, idle at Stop and Interrupt, end", () => {
  // Inputs as seen from the real CLI (session ids shortened).
  const base = { session_id: "01a23b22", transcript_path: "/h/sessions/rollout.jsonl", cwd: "/w", model: "gpt-5", permission_mode: "default" };
  assert.equal(codexHookEvent({ ...base, hook_event_name: "SessionStart", source: "startup" }), { action: "start", event: "SessionStart", cwd: "/w", sessionId: "01a23b22", atPrompt: true });
  assert.is(codexHookEvent({ ...base, hook_event_name: "SessionStart", source: "resume" }).atPrompt, true);
  assert.is(codexHookEvent({ ...base, hook_event_name: "UserPromptSubmit", prompt: "go on" }).action, "busy");
  assert.is(codexHookEvent({ ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } }).action, "busy");
  assert.is(codexHookEvent({ ...base, hook_event_name: "PostToolUse", tool_name: "Bash", tool_response: "x" }).action, "busy", "a tool that ran answers the permission it waited for");
  assert.equal(codexHookEvent({ ...base, hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: { command: "touch /etc/x", description: "Need to write outside" } }), {
    action: "needs_info", event: "PermissionRequest", cwd: "/w", sessionId: "01a23b22", reason: "Codex asks permission to run Bash: touch /etc/x",
  });
  assert.equal(codexHookEvent({ ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "done" }).turnEnded, true);
  assert.equal(codexHookEvent({ ...base, hook_event_name: "Interrupt" }), { action: "idle", event: "Interrupt", cwd: "/w", sessionId: "01a23b22", turnEnded: true });
  assert.is(codexHookEvent({ ...base, hook_event_name: "SessionEnd", reason: "other" }).action, "end");
  assert.is(codexHookEvent({ ...base, hook_event_name: "PreCompact" }).action, "none");
  assert.is(codexHookEvent({ type: "agent-turn-complete" }).action, "none", "the notify argument of older versions is no hook event");
  assert.is(codexHookEvent("Stop").action, "none");
});

test("a prompt a worker is given is noted in its ledger: robot-army's own message with its words, the owner's by length and hash only", () =>
  inRepo(async (_repo, journal) => {
    const feedback = "robot-army: feedback came on your work for demo/widgets#1. 1) @owner requested changes";
    const event = claudeHookEvent({ hook_event_name: "UserPromptSubmit", session_id: "s", cwd: "/w", prompt: feedback });
    assert.equal([event.action, event.prompt], ["busy", feedback]);
    assert.is(codexHookEvent({ hook_event_name: "UserPromptSubmit", prompt: "hi" }).prompt, "hi");
    await applyHook(journal, { key: "item-1", action: "busy", prompt: feedback, clientPid: process.pid, now: T(1) });
    await applyHook(journal, { key: "item-1", action: "busy", prompt: "my password is hunter2", clientPid: process.pid, now: T(2) });
    const prompts = (await readLedger(journal)).events.filter((e) => e.kind === "prompt").map((e) => e.data);
    assert.equal(prompts.map((p) => [p.from, p.text, p.length]), [["robot-army", feedback, [...feedback].length], ["owner", undefined, 22]]);
    assert.match(String(prompts[1].sha256), /^[0-9a-f]{64}$/);
  }));

test("an idle or busy report with no episode open opens one; an end with none open does nothing", () =>
  inRepo(async (_repo, journal) => {
    assert.match(await applyHook(journal, { key: "item-5", action: "end", clientPid: process.pid, now: T(0) }), "is not open; nothing to end");
    assert.match(await applyHook(journal, { key: "item-5", action: "idle", clientPid: process.pid, now: T(1) }), "is idle since 2026-01-15T10:01:00Z");
    const open = (await findOpen(journal, "item-5"))!.episode!;
    assert.equal([open.status, open.status_changed_at, open.started_at], ["idle", "2026-01-15T10:01:00Z", "2026-01-15T10:01:00Z"]);
    assert.match(await applyHook(journal, { key: "item-5", action: "none", clientPid: process.pid, now: T(2) }), "nothing to do");
    assert.match(await applyHook(journal, { key: "item-6", action: "busy", clientPid: process.pid, now: T(3) }), "started episode");
  }));

test("needs_info from a hook is its agent's blocking prompt: the idle prompt leaves it, the end of the turn or busy answers it", () =>
  inRepo(async (_repo, journal) => {
    const hook = (action: "needs_info" | "idle" | "busy", minute: number, more: { reason?: string; turnEnded?: boolean } = {}) =>
      applyHook(journal, { key: "item-5", action, ...more, clientPid: process.pid, now: T(minute) });
    const asks = { reason: "Claude needs your permission to use Bash" };
    assert.match(await hook("needs_info", 1, asks), "is needs_info since 2026-01-15T10:01:00Z: Claude needs your permission to use Bash");
    assert.is((await findOpen(journal, "item-5"))!.episode!.needs_info_by, "prompt");
    assert.match(await hook("idle", 2), "is still needs_info since 2026-01-15T10:01:00Z: Claude needs your permission to use Bash (busy answers it)");
    assert.match(await hook("needs_info", 3, asks), "is still needs_info since 2026-01-15T10:01:00Z");
    assert.match(await hook("needs_info", 4, { reason: "Claude needs your permission to use Edit" }), "is needs_info since 2026-01-15T10:04:00Z: Claude needs your permission to use Edit");
    assert.match(await hook("busy", 5), "is busy since 2026-01-15T10:05:00Z");
    assert.equal([(await findOpen(journal, "item-5"))!.episode!.status, (await findOpen(journal, "item-5"))!.episode!.needs_info_reason], ["busy", undefined]);
    // Asked again, and the turn ends: the agent could not have ended it before the prompt was answered.
    await hook("needs_info", 6, asks);
    assert.match(await hook("idle", 7, { turnEnded: true }), "is idle since 2026-01-15T10:07:00Z");
    const open = (await findOpen(journal, "item-5"))!.episode!;
    assert.equal([open.status, open.needs_info_reason, open.needs_info_by], ["idle", undefined, undefined]);
  }));

test("a damaged open file is reported, never overwritten", () =>
  inRepo(async (_repo, journal) => {
    await applyHook(journal, { key: "item-5", action: "start", clientPid: process.pid, now: T(0) });
    writeFileSync(openFile(journal, "item-5"), "status: [");
    await rejects(applyHook(journal, { key: "item-5", action: "idle", clientPid: process.pid, now: T(1) }), PreconditionError, 'Open episode file of "item-5"');
  }));

test("episode hook codex reads the hook's JSON on stdin and keeps the episode, exiting 0 whatever it is given", () =>
  inRepo(async (repo, journal) => {
    const [runtime, ...script] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, RA_NOW: "2026-01-15T10:05:00Z" };
    const run = (input: string) => spawnSync(runtime, [...script, "episode", "hook", "codex", "--key", "item-5"], { cwd: repo, env, encoding: "utf8", input });
    const stop = JSON.stringify({ session_id: "b5c7", turn_id: "1", cwd: repo, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "Done." });
    const done = run(stop);
    assert.is(done.status, 0, done.stderr);
    assert.match(done.stderr, "codex Stop: episode ");
    assert.is(done.stdout, "", "nothing on stdout, which Codex reads");
    assert.equal([(await findOpen(journal, "item-5"))?.episode?.status, (await findOpen(journal, "item-5"))?.episode?.status_changed_at], ["idle", "2026-01-15T10:05:00Z"]);
    const nothing = run("");
    assert.is(nothing.status, 0);
    assert.match(nothing.stderr, "robot-army: episode hook: the Codex hook input is not JSON");
  }));

test("a PermissionRequest is needs_info in its own words: the tool and the command, file or address it would act on", () => {
  assert.equal(claudeHookEvent({ hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: { command: "git push -u origin HEAD" } }), {
    action: "needs_info", event: "PermissionRequest", reason: "Claude Code asks permission to run Bash: git push -u origin HEAD",
  });
  assert.is(permissionWords("WebFetch", { url: "https://example.com/x", prompt: "read it" }), "Claude Code asks permission to use WebFetch: https://example.com/x");
  assert.is(permissionWords("mcp__db__query", {}), "Claude Code asks permission to use mcp__db__query");
  assert.is(permissionWords(undefined, null), "Claude Code asks permission to use a tool");
  const long = permissionWords("Bash", { command: "x".repeat(500) });
  assert.ok(long.length < 260 && long.endsWith("…"), long);
  // Claude Code's notification that follows says less, and is marked so it never replaces those words.
  assert.is(claudeHookEvent({ hook_event_name: "Notification", notification_type: "permission_prompt", message: "Claude needs your permission" }).vague, true);
});

test.run();
