/**
 * `robot-army onboard owner/name [--reapprove]`: the owner's approval of a repository.
 * Checks that the configured clone's origin is that repository and records a fingerprint
 * of its settings; `--reapprove` accepts settings that changed since.
 */
import type { CommandDef, ParsedArgs, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, asLines, helpText, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { UsageError } from "../lib/errors.ts";
import { describeChanges } from "../lib/repos/fingerprint.ts";
import type { Fingerprint } from "../lib/repos/fingerprint.ts";
import { onboardRepository } from "../lib/repos/onboard.ts";
import type { OnboardResult } from "../lib/repos/onboard.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";

export const command: CommandDef = {
  name: "onboard",
  summary: "Approve a repository for robot-army to work on",
  usage: "onboard owner/name [--reapprove] [--config FILE] [--json]",
  description: `\
The repository must have a [repos."owner/name"] table in the config whose path is a clone
of it: the clone's origin must be the repository GitHub describes (https with or without
.git, git@host:owner/name, or the sandbox forge's path). Onboarding records a fingerprint
of the repository's settings (GitHub's settings, default branch, private, the clone's
path) and writes a repo.onboarded audit record. Running it again changes nothing while
the settings are the same.

When the settings change (seen here, by "robot-army repos", or by a poll), the repository
needs reapproval and nothing is dispatched to it until "onboard owner/name --reapprove".
A clone whose origin is another repository is refused (exit 3).
`,
  options: {
    reapprove: { type: "boolean", description: "Approve settings that changed since the repository was onboarded" },
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army onboard octo-org/widgets", "robot-army onboard octo-org/widgets --reapprove"],
};

/** What `onboard` was asked for. */
export interface OnboardOptions {
  repo: string;
  reapprove: boolean;
  json: boolean;
}

/** What `onboard` works with. */
export interface OnboardDeps {
  config: Config;
  store: Store;
  github: Pick<GitHubReader, "getRepository">;
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
  return { repo, reapprove: args.values.reapprove === true, json: args.values.json === true };
}

/** Onboards (or reapproves) the repository and says what was recorded. */
export async function run(opts: OnboardOptions, deps: OnboardDeps): Promise<number> {
  const result = await onboardRepository(deps.store, deps.github, deps.config, opts.repo, { reapprove: opts.reapprove });
  if (opts.json) {
    deps.write(asJson(toJson(result)));
    return 0;
  }
  deps.write(asLines(...describe(result), ...nextStep(result, deps.config)));
  return 0;
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
  if (result.outcome === "reapproved") lines.push(`reapproved  ${result.name}: ${describeChanges(result.changes) || "nothing differs now"}`);
  if (result.outcome === "unchanged") lines.push(`unchanged   ${result.name}: onboarded at ${result.record.onboarded_at}, settings as approved`);
  lines.push(`clone       ${result.path}`, `origin      ${result.origin}`, `settings    ${settingsLine(result.fingerprint)}`);
  if (result.outcome !== "unchanged") lines.push(`recorded    at ${result.record.onboarded_at}; "robot-army log --kind repo." shows it`);
  return lines;
}

/** `default_branch "main", private false, ...`: every setting but the path, which has its own line. */
function settingsLine(fingerprint: Fingerprint): string {
  return Object.entries(fingerprint)
    .filter(([key]) => key !== "path")
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
    changes: result.changes,
  };
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
