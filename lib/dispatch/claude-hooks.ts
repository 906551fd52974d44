/**
 * The hooks that let Claude Code keep its own episode: written into the worktree's local
 * settings (`.claude/settings.local.json`, which Claude Code reads and never commits), each
 * running `robot-army episode hook claude --key <key>` with the event's JSON on stdin.
 *
 * | Claude Code event                 | the episode            |
 * |-----------------------------------|------------------------|
 * | SessionStart                      | opened (or, resumed, busy) |
 * | UserPromptSubmit, PreToolUse      | busy                   |
 * | Stop, Notification `idle_prompt`  | idle                   |
 * | PermissionRequest                 | needs_info (the tool and its command or file the reason), until busy or Stop |
 * | Notification `permission_prompt`, `elicitation_dialog`, `agent_needs_input` | needs_info (its message the reason, unless a PermissionRequest said more), until busy or Stop |
 * | SessionEnd                        | ended                  |
 *
 * Beside the hooks, the same file grants what the worker's prompt asks of it and nothing
 * broader, so a worker with the default configuration starts without a permission prompt:
 * the folder its prompt file is in (`permissions.additionalDirectories`: the file is kept
 * outside the worktree, 0600, in a folder of its own) and the robot-army commands the prompt
 * names (`permissions.allow`: `robot-army episode needs-info` and `robot-army ledger append`,
 * run through the launcher robot-army puts first on the worker's PATH).
 *
 * The file is merged, never clobbered: the owner's settings, hooks and rules stay as they are,
 * and only robot-army's own hooks (any command running `episode hook claude`) are replaced.
 * The file is added to the repository's git exclude file (for a worktree, the common one), so
 * it never makes the worktree dirty.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { appendLine, writeFileAtomic } from "../atomic.ts";
import { repositoryAt } from "../boundaries/git.ts";
import { PreconditionError } from "../errors.ts";
import { quoteWord } from "../shell-words.ts";

/** Where Claude Code reads a project's local settings, relative to the worktree. */
export const CLAUDE_LOCAL_SETTINGS = ".claude/settings.local.json";

/** The hook events robot-army listens to, with the matcher each needs (none: every occurrence). */
export const CLAUDE_HOOK_EVENTS: readonly { event: string; matcher?: string }[] = [
  { event: "SessionStart" },
  { event: "UserPromptSubmit" },
  { event: "PreToolUse", matcher: "*" },
  { event: "Stop" },
  // Fires as a permission dialog opens, with the tool and its input: what the owner is asked, in the hook's own words.
  { event: "PermissionRequest", matcher: "*" },
  // The matcher is a pattern on notification_type. A permission prompt, a question or a choice put to the owner
  // (auto mode's "needs your choice") is not idleness (the agent is in the middle of its work) but the worker
  // waiting for its owner: needs_info (CLAUDE_OWNER_NOTIFICATIONS in lib/episodes/hook.ts).
  { event: "Notification", matcher: "idle_prompt|permission_prompt|elicitation_dialog|agent_needs_input" },
  { event: "SessionEnd" },
];

/** How long Claude Code lets one of these hooks run (its default is a minute): a stuck one must not hold the agent long. */
const HOOK_TIMEOUT_SECONDS = 30;

/** The commands a worker's prompt asks it to run, allowed without a prompt: robot-army's own, with the verbs the prompt names. */
export const CLAUDE_ALLOWED_COMMANDS: readonly string[] = ["Bash(robot-army episode needs-info:*)", "Bash(robot-army ledger append:*)"];

/** What marks a hook command as robot-army's own, so a later start replaces it. */
const OURS = / episode hook claude( |$)/;

/**
 * The shell command a hook runs: robot-army's launcher, by its absolute path, with the episode
 * key and the worker's session id. Every Claude Code started in the worktree reads these
 * settings (the owner's own, a `claude --resume` by hand): the hook acts only on the events of
 * the session robot-army started, so another one's `Stop` never makes a busy worker idle.
 */
export function claudeHookCommand(robotArmy: string, episodeKey: string, sessionId: string): string {
  return `${quoteWord(robotArmy)} episode hook claude --key ${quoteWord(episodeKey)} --session ${quoteWord(sessionId)}`;
}

interface HookGroup {
  matcher?: string;
  hooks?: { type?: string; command?: string }[];
  [other: string]: unknown;
}

/**
 * Writes robot-army's hooks for `episodeKey` into the worktree's local Claude Code settings,
 * merged with what the file holds, and git-excludes the file. A file that is not a JSON
 * object is refused (never overwritten): it is the owner's.
 */
export async function writeClaudeHooks(worktree: string, options: { robotArmy: string; episodeKey: string; sessionId: string; promptDir?: string }): Promise<string> {
  const file = join(worktree, CLAUDE_LOCAL_SETTINGS);
  const settings = readSettings(file);
  const command = claudeHookCommand(options.robotArmy, options.episodeKey, options.sessionId);
  const hooks = isObject(settings.hooks) ? settings.hooks : {};
  for (const { event, matcher } of CLAUDE_HOOK_EVENTS) {
    const groups = (Array.isArray(hooks[event]) ? hooks[event] : []) as HookGroup[];
    const theirs = groups.map(withoutOurs).filter((group): group is HookGroup => group !== undefined);
    hooks[event] = [...theirs, { ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: "command", command, timeout: HOOK_TIMEOUT_SECONDS }] }];
  }
  settings.hooks = hooks;
  settings.permissions = withGrants(settings.permissions, options.promptDir);
  writeFileAtomic(file, JSON.stringify(settings, null, 2) + "\n");
  await excludeFromGit(worktree);
  return file;
}

/**
 * The settings' permissions with robot-army's grants added where missing: its commands to
 * `allow`, the prompt's folder to `additionalDirectories`. The owner's entries, and anything
 * else in `permissions`, stay; a list that is not a list is the owner's mistake and refused.
 */
function withGrants(permissions: unknown, promptDir: string | undefined): Record<string, unknown> {
  if (permissions !== undefined && !isObject(permissions)) throw new PreconditionError(`Cannot add robot-army's permissions: "permissions" in ${CLAUDE_LOCAL_SETTINGS} is not a JSON object; fix it or remove it`);
  const grants = { ...permissions };
  const added = (field: string, entries: readonly string[]) => {
    const current = grants[field] ?? [];
    if (!Array.isArray(current)) throw new PreconditionError(`Cannot add robot-army's permissions: "permissions.${field}" in ${CLAUDE_LOCAL_SETTINGS} is not a list; fix it or remove it`);
    grants[field] = [...current, ...entries.filter((entry) => !current.includes(entry))];
  };
  added("allow", CLAUDE_ALLOWED_COMMANDS);
  if (promptDir !== undefined) added("additionalDirectories", [promptDir]);
  return grants;
}

/** A group with robot-army's hooks taken out; undefined when nothing else was in it. */
function withoutOurs(group: HookGroup): HookGroup | undefined {
  if (!isObject(group) || !Array.isArray(group.hooks)) return group;
  const kept = group.hooks.filter((hook) => !(typeof hook?.command === "string" && OURS.test(hook.command)));
  if (kept.length === group.hooks.length) return group;
  return kept.length ? { ...group, hooks: kept } : undefined;
}

function readSettings(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new PreconditionError(`Cannot add robot-army's hooks to "${file}": it is not JSON (${(error as Error).message}); fix it or remove it`);
  }
  if (!isObject(value)) throw new PreconditionError(`Cannot add robot-army's hooks to "${file}": it is not a JSON object; fix it or remove it`);
  return value;
}

/** Adds the settings file to the repository's exclude file unless a line already names it. */
async function excludeFromGit(worktree: string): Promise<void> {
  const { excludeFile } = await repositoryAt(worktree);
  const current = existsSync(excludeFile) ? readFileSync(excludeFile, "utf8") : "";
  const lines = current.split("\n").map((line) => line.trim());
  if (lines.includes(`/${CLAUDE_LOCAL_SETTINGS}`) || lines.includes(CLAUDE_LOCAL_SETTINGS)) return;
  appendLine(excludeFile, "# robot-army: a worker's Claude Code hooks are local settings, never committed");
  appendLine(excludeFile, `/${CLAUDE_LOCAL_SETTINGS}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
