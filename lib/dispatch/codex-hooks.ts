/**
 * What a Codex worker is started with so it keeps its own episode, all of it on its command
 * line (Codex's session-flags layer), nothing written into the worktree or the owner's Codex
 * config:
 *
 * - **Its hooks.** Each event below runs `robot-army episode hook codex --key <key> --session
 *   <id>` with the event's JSON on stdin (lib/episodes/hook.ts maps it, as for Claude Code):
 *
 *   | Codex event                        | the episode                      |
 *   |------------------------------------|----------------------------------|
 *   | SessionStart (at the first prompt) | opened                           |
 *   | UserPromptSubmit, PreToolUse, PostToolUse | busy                      |
 *   | PermissionRequest                  | needs_info (the command, in its words) |
 *   | Stop, Interrupt (Esc; no Stop follows) | idle                         |
 *   | SessionEnd                         | ended                            |
 *
 * - **Their trust, and only theirs.** Codex runs a hook only once its definition is trusted: a
 *   `trusted_hash` per hook, kept under `hooks.state`, keyed by the layer the hook comes from
 *   and its place there. robot-army states the hash of each hook it passes itself, keyed to the
 *   session-flags layer (`/<session-flags>/config.toml:<event>:0:0`), so its own hooks run and
 *   nothing else is trusted by it: hooks committed in the repository (`.codex/`) stay under
 *   Codex's own review (and robot-army's fingerprint, lib/repos/agent-files.ts), and the folder
 *   itself stays the owner's to trust (`robot-army trust`, lib/dispatch/agent-trust.ts).
 *   The hash is Codex's: sha256 of the hook's canonical JSON (`{"event_name", "hooks": [{"async",
 *   "command", "timeout", "type"}]}`, keys sorted), seen to match Codex 0.171's own.
 *
 * - **The git folders a commit writes.** Codex's default sandbox (workspace-write, in a trusted
 *   folder) lets a command write in its workspace only; a worktree's git data lies outside it
 *   (`<clone>/.git/worktrees/<name>`, and the clone's shared objects, refs and reflogs), so every
 *   commit would stop to ask. Those folders are added to the sandbox's writable roots, after the
 *   owner's own (`sandbox_workspace_write.writable_roots` of their config.toml, which a `-c`
 *   would otherwise replace), and nothing else: a push still asks, as its network is the
 *   sandbox's to refuse. A setting, not `--add-dir`: Codex refuses to start with `--add-dir` in
 *   a folder it does not trust yet (read-only), where the worker must reach the trust question.
 *
 * - `--no-daemon`: by default Codex runs its sessions (and their hooks) in a background server
 *   shared by every Codex of the user, where the worker's environment (RA_SESSION_ID, which
 *   identifies the worker to its hooks) is not the hooks' and `/exit` ends no session.
 */
import { sha256Hex } from "../sha256.ts";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { quoteWord } from "../shell-words.ts";
import { codexConfigFile } from "./agent-trust.ts";

/** The events robot-army hooks, with the name Codex gives each in its hook-trust keys. */
export const CODEX_HOOK_EVENTS: readonly { event: string; label: string }[] = [
  { event: "SessionStart", label: "session_start" },
  { event: "UserPromptSubmit", label: "user_prompt_submit" },
  { event: "PreToolUse", label: "pre_tool_use" },
  { event: "PermissionRequest", label: "permission_request" },
  { event: "PostToolUse", label: "post_tool_use" },
  { event: "Stop", label: "stop" },
  { event: "Interrupt", label: "interrupt" },
  { event: "SessionEnd", label: "session_end" },
];

/** How long a hook may run, in seconds; Codex allows SessionEnd and Interrupt 3 at most (a longer one is clamped, and its hash no longer matches). */
function timeoutOf(event: string): number {
  return event === "SessionEnd" || event === "Interrupt" ? 3 : 30;
}

/** Where Codex says a hook given with `-c` comes from, in its hook-trust keys. */
const SESSION_FLAGS_LAYER = "/<session-flags>/config.toml";

/** The shell command each hook runs: robot-army's launcher, the episode key and the worker's session id. */
export function codexHookCommand(robotArmy: string, episodeKey: string, sessionId: string): string {
  return `${quoteWord(robotArmy)} episode hook codex --key ${quoteWord(episodeKey)} --session ${quoteWord(sessionId)}`;
}

/**
 * The hash Codex trusts a hook by: sha256 of its canonical JSON, as Codex computes it for a
 * command hook with no matcher.
 * @example codexHookHash("stop", "x", 30) // "sha256:…"
 */
export function codexHookHash(label: string, command: string, timeout: number): string {
  const identity = { event_name: label, hooks: [{ async: false, command, timeout, type: "command" }] };
  return `sha256:${sha256Hex(JSON.stringify(identity))}`;
}

/** The `-c` pairs that give a worker robot-army's hooks and trust exactly those. */
export function codexHookArgs(robotArmy: string, episodeKey: string, sessionId: string): string[] {
  const command = codexHookCommand(robotArmy, episodeKey, sessionId);
  const args: string[] = [];
  const state: string[] = [];
  for (const { event, label } of CODEX_HOOK_EVENTS) {
    const timeout = timeoutOf(event);
    // TOML inline tables; a JSON string is a TOML basic string.
    args.push("-c", `hooks.${event}=[{hooks=[{type="command",command=${JSON.stringify(command)},timeout=${timeout}}]}]`);
    state.push(`${JSON.stringify(`${SESSION_FLAGS_LAYER}:${label}:0:0`)}={trusted_hash=${JSON.stringify(codexHookHash(label, command, timeout))}}`);
  }
  args.push("-c", `hooks.state={${state.join(",")}}`);
  return args;
}

/**
 * The git folders a commit in `worktree` writes that lie outside it: the worktree's own git
 * folder (its index, HEAD and reflog) and the clone's objects, refs and reflogs. Each is
 * created when missing (git would create it at the first commit, which the sandbox forbids).
 * Empty when the worktree's git data cannot be read.
 */
export function commitFolders(worktree: string): string[] {
  const dotGit = join(worktree, ".git");
  let gitDir: string;
  try {
    if (statSync(dotGit).isDirectory()) return [];
    const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
    if (!pointer) return [];
    gitDir = isAbsolute(pointer) ? pointer : resolve(worktree, pointer);
  } catch {
    return [];
  }
  const commonFile = join(gitDir, "commondir");
  const common = existsSync(commonFile) ? resolve(gitDir, readFileSync(commonFile, "utf8").trim()) : gitDir;
  const shared = ["objects", "refs", "logs"].map((name) => join(common, name));
  for (const folder of shared) mkdirSync(folder, { recursive: true });
  return [gitDir, ...shared];
}

/**
 * The writable roots the owner's Codex config gives its sandbox (`[sandbox_workspace_write]
 * writable_roots`), read from the config the worker's Codex reads; none when it sets none or
 * cannot be read (Codex will say why itself).
 */
export function ownerWritableRoots(env: Record<string, string | undefined>): string[] {
  try {
    const file = codexConfigFile(env);
    if (!existsSync(file)) return [];
    const config = parseToml(readFileSync(file, "utf8")) as { sandbox_workspace_write?: { writable_roots?: unknown } };
    const roots = config.sandbox_workspace_write?.writable_roots;
    return Array.isArray(roots) ? roots.filter((root): root is string => typeof root === "string") : [];
  } catch {
    return [];
  }
}

/** What a Codex worker's argv gets besides the owner's own arguments: no shared server, robot-army's hooks, the commit folders. */
export function codexWorkerArgs(options: { robotArmy: string; episodeKey: string; sessionId: string; worktree: string; env: Record<string, string | undefined> }): string[] {
  const ours = commitFolders(options.worktree);
  const roots = [...new Set([...ownerWritableRoots(options.env), ...ours])];
  return [
    "--no-daemon",
    ...codexHookArgs(options.robotArmy, options.episodeKey, options.sessionId),
    ...(ours.length ? ["-c", `sandbox_workspace_write.writable_roots=${JSON.stringify(roots)}`] : []),
  ];
}
