/**
 * A repository's agent files: the committed files that make an agent run commands or load
 * tools, and those robot-army adds to a worker's prompt. Whoever can push to the base branch
 * can change them, so they are part of what the owner approves at `onboard`: each one's
 * SHA-256 joins the fingerprint (`agent_file:<path>`), read with git from the commit a new
 * worktree would start from (origin's base branch, freshly fetched), never from the clone's
 * working tree, which the owner may have edited.
 *
 * - Claude Code: `.claude/settings.json` (hooks, permissions, env: the whole file),
 *   `.claude/settings.local.json` when committed, `.mcp.json`, and every other file under
 *   `.claude/` (hook scripts, commands, agents and skills it may run);
 * - Codex: `.codex/config.toml`, `.codex/hooks.json`, and every other file under `.codex/`;
 * - robot-army's own per-repository instructions: `.claude/robot-army.md`, `.robot-army/instructions.md`.
 *
 * CLAUDE.md and AGENTS.md are left out: they are words to the agent, and run nothing by
 * themselves; whatever they ask for still passes the settings fingerprinted here.
 */
import { posix } from "node:path";
import { git, runGit } from "../boundaries/run-git.ts";
import { RobotArmyError } from "../errors.ts";
import { AGENT_FILE_KEY } from "./fingerprint.ts";
import type { Fingerprint } from "./fingerprint.ts";
import { sha256Hex } from "../sha256.ts";

/** The agent files every fingerprint names, present or not (absent: null). */
export const AGENT_FILES: readonly string[] = [
  ".claude/settings.json",
  ".claude/settings.local.json",
  ".mcp.json",
  ".codex/config.toml",
  ".codex/hooks.json",
  ".claude/robot-army.md",
  ".robot-army/instructions.md",
];

/** Folders every committed file of which is an agent file too (named when present). */
export const AGENT_FOLDERS: readonly string[] = [".claude", ".codex"];

/** One agent file at a commit. */
export interface AgentFile {
  path: string;
  /** `symlink`: its value covers the link and what it points at inside the repository. */
  kind: "file" | "symlink" | "submodule" | "absent";
  /** SHA-256 (hex) of its content; null when absent. */
  sha256: string | null;
  /** Where a symbolic link points. */
  target?: string;
  /** The blob, for reading a regular file's text. */
  object?: string;
}

/** The agent files of one commit, in path order. */
export interface AgentFiles {
  commit: string;
  files: AgentFile[];
}

/** The agent files could not be read from the clone. */
export class AgentFilesUnreadable extends RobotArmyError {
  constructor(message: string) {
    super(message);
    this.name = "AgentFilesUnreadable";
  }
}

/** Reads the agent files at `commit` of the clone at `clone`, with git only. */
export async function readAgentFiles(clone: string, commit: string): Promise<AgentFiles> {
  const listed = await listTree(clone, commit, [...AGENT_FOLDERS, ...AGENT_FILES, ...parentsOfNamedFiles()]);
  const byPath = new Map<string, AgentFile>();
  for (const entry of listed) {
    if (!isAgentPath(entry.path, entry.mode === "120000")) continue;
    byPath.set(entry.path, await agentFileOf(clone, commit, entry));
  }
  for (const path of AGENT_FILES) if (!byPath.has(path)) byPath.set(path, { path, kind: "absent", sha256: null });
  const files = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { commit, files };
}

/** The fingerprint keys of the agent files: `agent_file:<path>` -> SHA-256 or null. */
export function agentFingerprint(agent: AgentFiles): Fingerprint {
  return Object.fromEntries(agent.files.map((file) => [`${AGENT_FILE_KEY}${file.path}`, file.sha256]));
}

/** Only the agent-file keys of a fingerprint. */
export function agentKeysOf(fingerprint: Fingerprint): Fingerprint {
  return Object.fromEntries(Object.entries(fingerprint).filter(([key]) => key.startsWith(AGENT_FILE_KEY)));
}

/** The fingerprint without its agent-file keys: the settings GitHub reports and the clone's path. */
export function settingsKeysOf(fingerprint: Fingerprint): Fingerprint {
  return Object.fromEntries(Object.entries(fingerprint).filter(([key]) => !key.startsWith(AGENT_FILE_KEY)));
}

/** The text of a regular agent file at its commit (undefined for a link, a submodule or an absent file). */
export async function agentFileText(clone: string, file: AgentFile): Promise<string | undefined> {
  if (file.kind !== "file" || !file.object) return undefined;
  return await git(clone, ["cat-file", "blob", file.object]);
}

/** Whether `commit` is a commit this clone still has (an approved one may be gone after a force-push and git's garbage collection). */
export async function hasCommit(clone: string, commit: string): Promise<boolean> {
  return (await runGit(clone, ["cat-file", "-e", "--end-of-options", `${commit}^{commit}`])).code === 0;
}

interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  path: string;
}

/** `git ls-tree -r` of some paths at a commit (paths from the top of the tree). */
async function listTree(clone: string, commit: string, paths: string[]): Promise<TreeEntry[]> {
  const listed = await runGit(clone, ["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit, "--", ...paths]);
  if (listed.code !== 0) throw new AgentFilesUnreadable(`Cannot list the agent files of commit ${commit} in "${clone}": ${listed.stderr.trim() || `git exited ${listed.code}`}`);
  return listed.stdout.split("\0").filter((line) => line !== "").map((line) => {
    const tab = line.indexOf("\t");
    const [mode, type, object] = line.slice(0, tab).split(" ");
    return { mode, type, object, path: line.slice(tab + 1) };
  });
}

/** A named file, anything under an agent folder, or a symbolic link standing where a named file's folder is. */
function isAgentPath(path: string, symlink: boolean): boolean {
  if (AGENT_FILES.includes(path) || AGENT_FOLDERS.some((folder) => path === folder || path.startsWith(`${folder}/`))) return true;
  return symlink && parentsOfNamedFiles().includes(path);
}

/** `.robot-army` and the like: a link there would put a named file somewhere else. */
function parentsOfNamedFiles(): string[] {
  return [...new Set(AGENT_FILES.map((path) => posix.dirname(path)).filter((dir) => dir !== "." && !AGENT_FOLDERS.includes(dir)))];
}

async function agentFileOf(clone: string, commit: string, entry: TreeEntry): Promise<AgentFile> {
  if (entry.mode === "160000") return { path: entry.path, kind: "submodule", sha256: sha256Hex(`submodule ${entry.object}`) };
  const bytes = await blobBytes(clone, entry.object);
  if (entry.mode !== "120000") return { path: entry.path, kind: "file", sha256: sha256Hex(bytes), object: entry.object };
  // A link's value covers where it points and, inside the repository, what is there (a file or a
  // whole folder), so a change behind the link is a change of the link.
  const target = new TextDecoder().decode(bytes);
  const resolved = posix.normalize(posix.join(posix.dirname(entry.path), target));
  const inside = !posix.isAbsolute(target) && resolved !== ".." && !resolved.startsWith("../");
  const behind = inside ? (await listTree(clone, commit, [resolved])).map((e) => `${e.mode} ${e.object} ${e.path}`).join("\n") : "";
  return { path: entry.path, kind: "symlink", sha256: sha256Hex(`symlink\0${target}\0${behind}`), target };
}

async function blobBytes(clone: string, object: string): Promise<Uint8Array> {
  const read = await runGit(clone, ["cat-file", "blob", object]);
  if (read.code !== 0) throw new AgentFilesUnreadable(`Cannot read object ${object} in "${clone}": ${read.stderr.trim() || `git exited ${read.code}`}`);
  return read.stdoutBytes;
}

