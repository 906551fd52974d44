/**
 * `robot-army approve <id>`: the owner's word that a work item's body, edited by someone
 * else, may be worked on as it reads now. GitHub is asked who edited it (and its text) at
 * once; the approval is kept as the hash of exactly that text, audited as the fact
 * `trust.body_approved`, and a later edit by anyone else holds the item again.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { PreconditionError } from "../lib/errors.ts";
import { approveBody, bodyHash, describeDoubt, readTrustFacts, recordTrust, trustRulesOf } from "../lib/intake/issue-trust.ts";
import { printable } from "../lib/printable.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { getItem, refreshSnapshot, requireItem } from "../lib/work-items/queries.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "approve",
  summary: "Approve a work item's body that someone else edited, as it reads now",
  usage: "approve <id> [--config FILE] [--json]",
  description: `\
A work item whose issue body was edited by anyone but github.author is held for you:
no worker is started on another person's words. Read the body first ("robot-army
prompt <id>" shows it as a worker would get it), then approve it: GitHub is asked who
edited it and what it says now, and your approval is kept as a hash of exactly that
text (audited as trust.body_approved). A later edit holds the item again.

When the body changed since robot-army last read it, nothing is approved (exit 3): the
new text is read in, for you to read and approve. A body no one else edited needs no
approval. Approval never lifts a label someone else added, and --force never lifts a hold
for you. GitHub not answering is exit 1, an unknown or finished item exit 3.
`,
  options: { config: CONFIG_OPTION, json: JSON_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army approve 12", "robot-army approve 12 --json"],
};

/** What `approve` works with: the config (whose words are trusted), the store and GitHub to ask. */
export interface ApproveDeps {
  config: Config;
  store: Store | undefined;
  github: Pick<GitHubReader, "labelEvents" | "bodyAuthorship">;
  write: Write;
}

/** What `approve` did, as `--json` prints it. */
export interface ApproveReport {
  item: number;
  repo: string;
  issue: number;
  /** Whether an approval was recorded now (false when there was nothing to approve). */
  approved: boolean;
  sha256: string | null;
  edited_by: string[];
  /** Why the item is still held for you after this (its label), or null. */
  held: string | null;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const id = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    const { connectGitHub } = await import("../lib/boundaries/github.ts");
    const github = await connectGitHub(config, store ?? null, {});
    return run({ id, json: args.values.json === true }, { config, store, github, write: writeStdout });
  });
}

/** Asks GitHub, then records the approval of the body as it reads, or says why not. */
export async function run(opts: { id: number; json: boolean }, deps: ApproveDeps): Promise<number> {
  const { store } = deps;
  const found = requireItem(store, opts.id);
  if (found.state === "done" || found.state === "abandoned") throw new PreconditionError(`Work item ${found.id} is ${found.state}; nothing of it starts again, so there is nothing to approve`);
  const rules = trustRulesOf(deps.config.github);
  if (!rules) throw new PreconditionError("github.author is not set, so no issue's words can be told to be yours; set it in the config");
  const facts = await readTrustFacts(deps.github, found.repo, found.issue, rules);
  if (bodyHash(facts.body) !== bodyHash(found.body)) {
    refreshSnapshot(store!, found.id, { ...found, body: facts.body });
    recordTrust(store!, getItem(store!, found.id)!, facts, rules);
    throw new PreconditionError(`The body of ${found.repo}#${found.issue} changed since robot-army last read it; nothing was approved: read it again ("robot-army prompt ${found.id}"), then approve it`);
  }
  const doubt = recordTrust(store!, found, facts, rules);
  const report: ApproveReport = { item: found.id, repo: found.repo, issue: found.issue, approved: false, sha256: null, edited_by: facts.editedBy, held: null };
  if (facts.editedBy.length > 0) {
    report.approved = true;
    report.sha256 = approveBody(store!, found, found.body, facts.editedBy);
  }
  const still = doubt?.kind === "labelled" ? doubt : undefined;
  report.held = still ? describeDoubt(found.id, still, rules) : null;
  deps.write(opts.json ? JSON.stringify(report, null, 2) + "\n" : reportLines(report).map((line) => line + "\n").join(""));
  return 0;
}

function reportLines(report: ApproveReport): string[] {
  const which = `work item ${report.item} (${report.repo}#${report.issue})`;
  const lines = report.approved
    ? [`approved: ${which}: its body as it reads now, edited by ${printable(report.edited_by.join(", "))} (sha256 ${report.sha256!.slice(0, 12)}); a later edit holds it again`]
    : [`nothing to approve: ${which}: no one but its author edited its body`];
  if (report.held) lines.push(`still held for you: ${report.held}`);
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
