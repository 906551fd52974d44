/**
 * `onboard --diff`: how a repository's agent files on its base branch differ from what the
 * owner approved, as git's diff between the approved commit and the one origin's base branch
 * names now (fetched first, as dispatch would). Nothing is recorded: the owner reads, then
 * approves with `onboard --reapprove`. When the approved commit is no longer in the clone
 * (a force-push, then git's garbage collection), or none was recorded (an approval made
 * before agent files were read), each changed file is shown whole, as added.
 */
import { git, runGit } from "../boundaries/run-git.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { printable } from "../printable.ts";
import type { Store } from "../store/open.ts";
import { agentFingerprint, agentKeysOf, hasCommit } from "./agent-files.ts";
import { AGENT_FILE_KEY } from "./fingerprint.ts";
import { readBaseAgentFiles } from "./onboard.ts";
import { getRepoRecord } from "./records.ts";
import { posix } from "node:path";
import { baseBranchOf } from "./base-branch.ts";

/** What `onboard --diff` found. */
export interface AgentFilesDiff {
  repo: string;
  base: string;
  /** The commit whose agent files the owner approved; null when approved before they were read. */
  approved: string | null;
  /** Whether the clone still has the approved commit (the diff is from it, else from nothing). */
  approvedInClone: boolean;
  /** The commit origin's base branch names now. */
  commit: string;
  /** The agent files that differ, by path. */
  changed: string[];
  /** git's diff of those files, its control characters escaped for a terminal; empty when none differs. */
  diff: string;
}

/** Fetches the base branch and diffs the agent files that differ from the approval. */
export async function agentFilesDiff(store: Store, config: Config, name: string): Promise<AgentFilesDiff> {
  const record = getRepoRecord(store, name);
  if (!record) throw new PreconditionError(`Repository "${name}" is not onboarded: "robot-army onboard ${name}" shows its agent files and approves them`);
  if (!Object.hasOwn(config.repos, name)) throw new PreconditionError(`Repository "${name}" is not in the config: add a [repos."${name}"] table with the path of its clone`);
  const { path } = config.repos[name];
  const base = baseBranchOf(store, config, name);
  const agent = await readBaseAgentFiles({ name, path, base });
  const approvedKeys = agentKeysOf(record.fingerprint);
  const nowKeys = agentFingerprint(agent);
  const changed = [...new Set([...Object.keys(approvedKeys), ...Object.keys(nowKeys)])].sort()
    .filter((key) => (approvedKeys[key] ?? null) !== (nowKeys[key] ?? null))
    .map((key) => key.slice(AGENT_FILE_KEY.length));
  const approved = record.agent_commit;
  const approvedInClone = approved !== null && await hasCommit(path, approved);
  if (changed.length === 0) return { repo: name, base, approved, approvedInClone, commit: agent.commit, changed, diff: "" };
  // A link's change may be in what it points at: that is diffed too.
  const targets = agent.files.filter((f) => changed.includes(f.path) && f.target !== undefined && !posix.isAbsolute(f.target))
    .map((f) => posix.normalize(posix.join(posix.dirname(f.path), f.target!)))
    .filter((p) => p !== ".." && !p.startsWith("../"));
  const from = approvedInClone ? approved! : await emptyTree(path);
  // Literal paths (a file's name is the pusher's text); no external diff or text conversion runs.
  const diff = await git(path, ["--literal-pathspecs", "diff", "--no-color", "--no-ext-diff", "--no-textconv", from, agent.commit, "--", ...changed, ...targets]);
  return { repo: name, base, approved, approvedInClone, commit: agent.commit, changed, diff: printable(diff, { lines: true }) };
}

/** The id of the empty tree in this clone's hash (computed, not written). */
async function emptyTree(clone: string): Promise<string> {
  const made = await runGit(clone, ["hash-object", "-t", "tree", "--stdin"], "");
  if (made.code !== 0) throw new PreconditionError(`Cannot name the empty tree in "${clone}": ${made.stderr.trim()}`);
  return made.stdout.trim();
}
