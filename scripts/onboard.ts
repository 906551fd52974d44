/**
 * `robot-army onboard owner/name [--reapprove | --diff]`: the owner's approval of a repository.
 * Checks that the configured clone's origin is that repository and records a fingerprint
 * of its settings and of the agent files on its base branch, listing them;
 * `--reapprove` accepts settings or agent files that changed since, `--diff` shows how the
 * agent files changed.
 */
import { describeTrust, trustStoreFor, trusts } from "../lib/dispatch/agent-trust.ts";
import type { CommandDef, ParsedArgs, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, asLines, helpText, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { UsageError } from "../lib/errors.ts";
import { agentFilesDiff } from "../lib/repos/agent-diff.ts";
import type { AgentFilesDiff } from "../lib/repos/agent-diff.ts";
import { summariseAgentFiles } from "../lib/repos/agent-summary.ts";
import { AGENT_FILE_KEY } from "../lib/repos/fingerprint.ts";
import { reapprovedLine } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { Fingerprint } from "../lib/repos/fingerprint.ts";
import { onboardRepository } from "../lib/repos/onboard.ts";
import type { OnboardResult } from "../lib/repos/onboard.ts";
import { printable } from "../lib/printable.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";

export const command: CommandDef = {
  name: "onboard",
  summary: "Approve a repository for robot-army to work on",
  usage: "onboard owner/name [--reapprove | --yes | --diff] [--config FILE] [--json]",
  description: `\
The repository must have a [repos."owner/name"] table in the config whose path is a clone
of it: the clone's origin must be the repository GitHub describes (https with or without
.git, git@host:owner/name, or the sandbox forge's path). Onboarding records a fingerprint
of the repository's settings (GitHub's settings, default branch, private, the clone's
path) and of its agent files, and writes a repo.onboarded audit record. Running it again
changes nothing while they are the same.

The agent files are those that make an agent run commands or load tools, and those
robot-army adds to a worker's prompt: .claude/settings.json (and settings.local.json if
committed), .mcp.json, every file under .claude/ and .codex/ (.codex/config.toml,
.codex/hooks.json), and .robot-army/instructions.md. They are read with git from the
commit a new worktree would start from: the base branch as origin has it, fetched first,
never the clone's working tree. Each is listed with its SHA-256; what .claude/settings.json
holds is said in words (its hooks' events and commands, its permission rules, the names
of the variables it sets). CLAUDE.md and AGENTS.md are not among them: they run nothing.

When the settings change (seen here, by "robot-army repos", or by a poll), or the agent
files change on the base branch (seen before every start), the repository needs
reapproval and nothing is dispatched to it, forced or not, until
"onboard owner/name --reapprove"; "onboard owner/name --diff" shows how each agent file
changed since the commit you approved. A repository onboarded before agent files were
fingerprinted needs that once too. A clone whose origin is another repository is refused
(exit 3). Onboarding asks nothing; a script that provisions a machine runs
"onboard owner/name --yes", which approves what it finds whether it is the first time or
something changed since (as --reapprove), and never stops for reapproval.

With Claude Code as the worker, it also says whether Claude Code trusts the clone: every
worker starts in a new worktree, which Claude Code trusts only when its clone is trusted,
and a worker it does not trust stops at "Is this a project you trust?" before any hook
runs. Onboarding never records that answer: "robot-army trust owner/name" does, when you
say so.
`,
  options: {
    reapprove: { type: "boolean", description: "Approve settings or agent files that changed since the repository was onboarded" },
    yes: { type: "boolean", description: "For scripts: approve whatever is found, the first time or changed since, without stopping (as --reapprove)" },
    diff: { type: "boolean", description: "Show how the agent files on the base branch differ from those you approved; records nothing" },
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army onboard octo-org/widgets", "robot-army onboard octo-org/widgets --diff", "robot-army onboard octo-org/widgets --reapprove"],
};

/** What `onboard` was asked for. */
export interface OnboardOptions {
  repo: string;
  reapprove: boolean;
  diff: boolean;
  json: boolean;
}

/** What `onboard` works with. */
export interface OnboardDeps {
  config: Config;
  store: Store;
  github: Pick<GitHubReader, "getRepository">;
  /** Where Claude Code's config is found (HOME, CLAUDE_CONFIG_DIR); default: this process's environment. */
  env?: Record<string, string | undefined>;
  write: Write;
}

/** Parses argv, opens the store and GitHub, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const opts = onboardOptions(args);
  const config = await configFromArgs(args);
  return await withStore(ensureStateDir(), async (store) => {
    const { connectGitHub } = await import("../lib/boundaries/github.ts");
    const github = await connectGitHub(config, store);
    return await run(opts, { config, store, github, write: writeStdout });
  });
}

/** Reads the arguments; the repository must be written `owner/name`. */
export function onboardOptions(args: ParsedArgs): OnboardOptions {
  const repo = args.positionals[0];
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) {
    throw new UsageError(`The repository must be written owner/name, got "${repo}"`, helpText(command));
  }
  const reapprove = args.values.reapprove === true || args.values.yes === true;
  if (reapprove && args.values.diff === true) {
    throw new UsageError("--diff shows what --reapprove would approve: give one of them", helpText(command));
  }
  return { repo, reapprove, diff: args.values.diff === true, json: args.values.json === true };
}

/** Onboards (or reapproves) the repository and says what was recorded. */
export async function run(opts: OnboardOptions, deps: OnboardDeps): Promise<number> {
  if (opts.diff) return await showDiff(opts, deps);
  const result = await onboardRepository(deps.store, deps.github, deps.config, opts.repo, { reapprove: opts.reapprove });
  if (opts.json) {
    deps.write(asJson(toJson(result)));
    return 0;
  }
  const summaries = await summariseAgentFiles(result.path, result.agent);
  deps.write(asLines(...describe(result), ...agentFileLines(result, summaries), ...folderTrust(result, deps.config, deps.env ?? process.env), ...nextStep(result, deps.config)));
  return 0;
}

/** `--diff`: the agent files that differ from the approval, git's diff of them, and what approves them. */
async function showDiff(opts: OnboardOptions, deps: OnboardDeps): Promise<number> {
  const found = await agentFilesDiff(deps.store, deps.config, opts.repo);
  if (opts.json) {
    deps.write(asJson({
      repo: found.repo, base: found.base, approved_commit: found.approved, approved_commit_in_clone: found.approvedInClone,
      commit: found.commit, changed: found.changed, diff: found.diff,
    }));
    return 0;
  }
  deps.write(asLines(...diffLines(found)));
  return 0;
}

function diffLines(found: AgentFilesDiff): string[] {
  const approved = found.approved === null
    ? "never (onboarded before robot-army fingerprinted agent files): each file is shown whole"
    : `origin/${found.base} at ${found.approved}${found.approvedInClone ? "" : " (no longer in the clone: each file is shown whole)"}`;
  const lines = [`agent files ${found.repo}`, `approved    ${approved}`, `now         origin/${found.base} at ${found.commit}`];
  if (found.changed.length === 0) return [...lines, "changed     none: the agent files are as you approved them"];
  return [
    ...lines,
    `changed     ${found.changed.map((path) => printable(path)).join(", ")}`,
    "",
    ...found.diff.split("\n"),
    "",
    `approve     "robot-army onboard ${found.repo} --reapprove" approves them as they are now; until then nothing is dispatched to it`,
  ];
}

/** Each agent file read at onboarding: its SHA-256 and, for the settings files, what they hold; then those absent. */
function agentFileLines(result: OnboardResult, summaries: Map<string, string[]>): string[] {
  const present = result.agent.files.filter((f) => f.kind !== "absent");
  const absent = result.agent.files.filter((f) => f.kind === "absent").map((f) => f.path);
  const width = Math.max(0, ...present.map((f) => printable(f.path).length));
  const lines = [`agent files origin/${result.base} at ${result.agent.commit}${present.length ? "" : ": none present"}`];
  for (const file of present) {
    const kind = file.kind === "symlink" ? ` (symbolic link to ${printable(file.target ?? "")})` : file.kind === "submodule" ? " (submodule)" : "";
    lines.push(`            ${printable(file.path).padEnd(width)}  sha256 ${file.sha256}${kind}`);
    for (const said of summaries.get(file.path) ?? []) lines.push(`              ${said}`);
  }
  if (absent.length) lines.push(`absent      ${absent.join(", ")}`);
  return lines;
}

/**
 * With Claude Code or Codex as the worker: whether the agent trusts the clone, whose answer
 * holds for every worktree of it. Each worker starts in a new worktree, and one the agent has
 * not been told to trust stops at its folder-trust question before any hook runs; onboarding
 * says so and names the command that records the owner's yes, which it never records itself.
 */
function folderTrust(result: OnboardResult, config: Config, env: Record<string, string | undefined>): string[] {
  const { profile } = config.worker;
  if (profile !== "claude" && profile !== "codex") return [];
  try {
    const store = trustStoreFor(profile, env);
    return store ? [`trust       ${describeTrust(result.name, result.path, trusts(store, result.path), store)}`] : [];
  } catch (error) {
    return [`trust       whether ${profile === "claude" ? "Claude Code" : "Codex"} trusts ${result.path} cannot be told: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * What happens next. Onboarding approves a repository; it takes no issues (that is a
 * poll's work, with its own failures and its own record), so until the next poll `status`
 * shows no queue for it: say so, and how to poll now.
 */
function nextStep(result: OnboardResult, config: Config): string[] {
  if (result.outcome === "unchanged") return [];
  const { author, label } = config.github;
  if (!author) return [`next        no issue is taken until [github] author is set; then a poll takes those labelled "${label}"`];
  return [
    `next        the next poll ("robot-army poll", or the daemon's, every ${config.daemon.poll_seconds} s) turns its issues labelled`,
    `            "${label}" by ${author} into work items; until then "robot-army status" shows none of them`,
  ];
}

function describe(result: OnboardResult): string[] {
  const lines: string[] = [];
  if (result.outcome === "onboarded") lines.push(`onboarded   ${result.name}`);
  if (result.outcome !== "onboarded") lines.push(reapprovedLine(result));
  lines.push(`clone       ${result.path}`, `origin      ${result.origin}`, `settings    ${settingsLine(result.fingerprint)}`);
  if (result.outcome !== "unchanged") lines.push(`recorded    at ${result.record.onboarded_at}; "robot-army log --kind repo." shows it`);
  return lines;
}

/** `default_branch "main", private false, ...`: every setting but the path and the agent files, which have their own lines. */
function settingsLine(fingerprint: Fingerprint): string {
  return Object.entries(fingerprint)
    .filter(([key]) => key !== "path" && !key.startsWith(AGENT_FILE_KEY))
    .map(([key, value]) => `${key} ${JSON.stringify(value)}`)
    .join(", ");
}

function toJson(result: OnboardResult) {
  return {
    repo: result.name,
    outcome: result.outcome,
    path: result.path,
    origin: result.origin,
    state: result.record.state,
    onboarded_at: result.record.onboarded_at,
    fingerprint: result.fingerprint,
    agent_files: {
      base: result.base,
      commit: result.agent.commit,
      files: result.agent.files.map((f) => ({ path: f.path, kind: f.kind, sha256: f.sha256, ...(f.target !== undefined ? { target: f.target } : {}) })),
    },
    changes: result.changes,
  };
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
