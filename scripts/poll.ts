/**
 * `robot-army poll`: one intake pass. Reads what changed in each configured repository's
 * issues (one conditional request when nothing did), turns issues labelled by the author
 * into work items, and keeps live items in step: closed issue -> done, label removed
 * before dispatch -> abandoned, snapshots refreshed.
 */
import { hostname } from "node:os";
import type { CommandDef, ParsedArgs, Write } from "../lib/cli.ts";
import { JSON_OPTION, parse, runMain, stringOption, writeStderr, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS, resolveLevel, wireEffects } from "../lib/effects.ts";
import type { Effects } from "../lib/effects.ts";
import { EXIT, PreconditionError } from "../lib/errors.ts";
import { pollRepositories } from "../lib/intake/poll.ts";
import type { RepoPoll } from "../lib/intake/poll.ts";
import { reportLines } from "../lib/intake/report.ts";
import type { QueueCount } from "../lib/intake/report.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { listItems } from "../lib/work-items/queries.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "poll",
  summary: "Turn labelled issues into work items and keep items in step with their issues",
  usage: "poll [--repo R] [--effect-level L] [--include-simulated] [--json] [--config FILE]",
  description: `\
For each repository in the config, reads the issues changed since the last poll: one
request answered 304 when nothing changed. An open issue with the label (github.label)
opened by github.author becomes a work item, ready at once when the repository is
onboarded, and robot-army comments on the issue with the item's number and this host.
A labelled issue opened by anyone else is ignored and counted. For an issue it is about
to take, intake asks GitHub who added the label (the issue's events) and who edited the
body (GitHub's GraphQL API): a label last added by anyone but github.author is ignored,
counted and reported with who added it; a body edited by anyone else makes an item held
for you until "robot-army approve <id>". A closed issue makes its
item done; an issue that lost its label before dispatch makes its item abandoned (after
dispatch the removal is recorded and the work goes on).

Below the live effect level nothing is written to GitHub: comments are printed as
"would comment on ..." and audited as simulated, and new items are marked simulated.
When little of GitHub's rate limit is left, calls are deferred until it resets; the
repository is reported as not read and the next poll after the reset reads it.
`,
  options: {
    repo: { type: "string", value: "R", description: "Only this configured repository (owner/name)" },
    ...EFFECT_LEVEL_OPTIONS,
    "include-simulated": { type: "boolean", description: "Count simulated items in the queue line" },
    json: JSON_OPTION,
    config: CONFIG_OPTION,
  },
  examples: ["robot-army poll", "robot-army poll --repo demo/widgets --effect-level live", "robot-army poll --json"],
};

/** What `poll` was asked for. */
export interface PollOptions {
  repos: string[];
  includeSimulated: boolean;
  json: boolean;
}

/** What `poll` works with. */
export interface PollCommandDeps {
  config: Config;
  store: Store;
  reader: GitHubReader;
  effects: Effects;
  host: string;
  write: Write;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  const level = resolveLevel(args, config);
  const opts = pollOptions(args, config);
  return await withStore(ensureStateDir(), async (store) => {
    const { connectGitHub } = await import("../lib/boundaries/github.ts");
    const github = await connectGitHub(config, store, {
      onRetry: (r) => writeStderr(`robot-army: ${r.method} ${r.path}: ${r.reason}; retrying in ${Math.round(r.delayMs / 1000)}s\n`),
    });
    const effects = wireEffects(level, { github: github.writer });
    return await run(opts, { config, store, reader: github, effects, host: hostname(), write: writeStdout });
    // A poll writes many rows, as a tick does: it reads every page first, and a damaged store is refused before a write can spread it.
  }, { checkPages: true });
}

/** The repositories to poll, checked against the config; intake without an author takes nothing. */
export function pollOptions(args: ParsedArgs, config: Config): PollOptions {
  if (!config.github.author) {
    throw new PreconditionError(
      "No github.author is configured, so poll takes nothing: only issues opened by that login become work items (a stranger's label must never run code here); set [github] author in config.toml",
    );
  }
  const configured = Object.keys(config.repos);
  if (configured.length === 0) throw new PreconditionError(`No repositories are configured: add a [repos."owner/name"] table with the clone's path to config.toml`);
  const repo = stringOption(args, "repo");
  if (repo !== undefined && !configured.includes(repo)) {
    throw new PreconditionError(`Repository "${repo}" is not in the config (configured: ${configured.join(", ")})`);
  }
  return { repos: repo ? [repo] : configured, includeSimulated: args.values["include-simulated"] === true, json: args.values.json === true };
}

/** Runs one pass and reports it; exit 1 when a repository could not be read (a deferral is not a failure). */
export async function run(opts: PollOptions, deps: PollCommandDeps): Promise<number> {
  const rules = { author: deps.config.github.author!, label: deps.config.github.label };
  const paths = Object.fromEntries(Object.entries(deps.config.repos).map(([name, repo]) => [name, repo.path]));
  const results = await pollRepositories({ store: deps.store, reader: deps.reader, effects: deps.effects, rules, host: deps.host, paths }, opts.repos);
  const queue = queueCount(deps.store, opts.includeSimulated);
  if (opts.json) {
    const effects = { level: deps.effects.level, simulated: deps.effects.simulated };
    deps.write(JSON.stringify({ effects, repositories: results, queue }, null, 2) + "\n");
  } else {
    deps.write(reportLines(results, queue, deps.effects.simulated, deps.effects.level).map((line) => line + "\n").join(""));
  }
  return results.some((r: RepoPoll) => r.error !== null) ? EXIT.failed : EXIT.ok;
}

function queueCount(store: Store, includeSimulated: boolean): QueueCount {
  const real = listItems(store, { states: ["ready"] }).length;
  const all = listItems(store, { states: ["ready"], includeSimulated: true }).length;
  return { ready: real, simulated: all - real, include_simulated: includeSimulated };
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
