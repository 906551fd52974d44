/**
 * `robot-army approve <id> --sha256 <hash>`: the owner's word that a work item's title and
 * body, changed by someone else, may be worked on as they read. The hash names the words
 * the owner read (`prompt` and `show` print it): GitHub is asked who changed them and what
 * they say now, and only when the hash is theirs is the approval kept, as the hash of
 * exactly that text, audited as the fact `trust.body_approved`; a later change by anyone
 * else holds the item again. Without the hash nothing is approved: the command says what
 * the words' hash is now and what to run.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, helpText, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { SHORT_HASH, approveCommand, approveWords, describeDoubt, hashMatches, readTrustFacts, recordTrust, trustRulesOf, wordsHash } from "../lib/intake/issue-trust.ts";
import { printable } from "../lib/printable.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { getItem, refreshSnapshot, requireItem } from "../lib/work-items/queries.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "approve",
  summary: "Approve a work item's title and body that someone else changed, as you read them",
  usage: "approve <id> --sha256 HASH [--config FILE] [--json]",
  description: `\
A work item whose issue title or body was changed by anyone but github.author is held
for you: no worker is started on another person's words. Read them first ("robot-army
prompt <id>" shows them as a worker would get them, with their sha256 and the command
that approves them), then approve them with that hash: GitHub is asked who changed them
and what they say now, and only when the hash is of the title and body as they read now
is your approval kept, as that hash (audited as trust.body_approved). A later change
holds the item again.

Without --sha256, or with the hash of words that changed since you read them, nothing is
approved (exit 3): the words as they read now are read in, and their hash is printed for
you to read them and approve them. The hash may be shortened to its first ${SHORT_HASH} digits.
Words no one else changed need no approval. Approval never lifts a label someone else
added, and --force never lifts a hold for you. GitHub not answering is exit 1, an
unknown or finished item exit 3.
`,
  options: {
    sha256: { type: "string", value: "HASH", description: `The sha256 of the title and body you read, as prompt and show print it (at least ${SHORT_HASH} hex digits)` },
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army approve 12 --sha256 3f2a9c81b0d4", "robot-army approve 12 --sha256 3f2a9c81b0d4 --json"],
};

/** What `approve` works with: the config (whose words are trusted), the store and GitHub to ask. */
export interface ApproveDeps {
  config: Config;
  store: Store | undefined;
  github: Pick<GitHubReader, "issueEvents" | "bodyAuthorship">;
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
  renamed_by: string[];
  /** Why the item is still held for you after this (its label), or null. */
  held: string | null;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const id = itemIdArgument(command, args);
  const sha256 = typeof args.values.sha256 === "string" ? args.values.sha256 : null;
  if (sha256 !== null && !new RegExp(`^[0-9a-fA-F]{${SHORT_HASH},64}$`).test(sha256)) {
    throw new UsageError(`--sha256 takes the hash prompt and show print, at least ${SHORT_HASH} hex digits, got "${printable(sha256)}"`, helpText(command));
  }
  const config = await configFromArgs(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    const { connectGitHub } = await import("../lib/boundaries/github.ts");
    const github = await connectGitHub(config, store ?? null, {});
    return run({ id, json: args.values.json === true, sha256 }, { config, store, github, write: writeStdout });
  });
}

/** Asks GitHub, then records the approval of the words the hash names, if they are the words as they read now, or says why not. */
export async function run(opts: { id: number; json: boolean; sha256: string | null }, deps: ApproveDeps): Promise<number> {
  const { store } = deps;
  const found = requireItem(store, opts.id);
  if (found.state === "done" || found.state === "abandoned") throw new PreconditionError(`Work item ${found.id} is ${found.state}; nothing of it starts again, so there is nothing to approve`);
  const rules = trustRulesOf(deps.config.github);
  if (!rules) throw new PreconditionError("github.author is not set, so no issue's words can be told to be yours; set it in the config");
  const facts = await readTrustFacts(deps.github, found.repo, found.issue, rules);
  // The words as GitHub shows them now are read in, so prompt and show show them and their hash.
  if (wordsHash(facts) !== wordsHash(found)) refreshSnapshot(store!, found.id, { ...found, title: facts.title, body: facts.body });
  const item = getItem(store!, found.id)!;
  const doubt = recordTrust(store!, item, facts, rules);
  const report: ApproveReport = {
    item: item.id, repo: item.repo, issue: item.issue, approved: false, sha256: null, edited_by: facts.editedBy, renamed_by: facts.renamedBy, held: null,
  };
  if (facts.editedBy.length > 0 || facts.renamedBy.length > 0) {
    const now = wordsHash(item).slice(0, SHORT_HASH);
    const where = `${item.repo}#${item.issue}`;
    if (opts.sha256 === null) {
      throw new PreconditionError(`Nothing was approved: the title and body of ${where} as they read now have sha256 ${now}; read them ("robot-army prompt ${item.id}"), then run "${approveCommand(item.id, item)}"`);
    }
    if (!hashMatches(opts.sha256, wordsHash(item))) {
      throw new PreconditionError(`Nothing was approved: ${opts.sha256} is not the sha256 of the title and body of ${where} as they read now (${now}); read them again ("robot-army prompt ${item.id}")`);
    }
    report.approved = true;
    report.sha256 = approveWords(store!, item, item, facts);
  }
  const still = doubt?.kind === "labelled" ? doubt : undefined;
  report.held = still ? describeDoubt(item.id, still, rules) : null;
  deps.write(opts.json ? JSON.stringify(report, null, 2) + "\n" : reportLines(report).map((line) => line + "\n").join(""));
  return 0;
}

function reportLines(report: ApproveReport): string[] {
  const which = `work item ${report.item} (${report.repo}#${report.issue})`;
  const by = [...new Set([...report.renamed_by, ...report.edited_by])].join(", ");
  const lines = report.approved
    ? [`approved: ${which}: its title and body as they read now, changed by ${printable(by)} (sha256 ${report.sha256!.slice(0, SHORT_HASH)}); a later change holds it again`]
    : [`nothing to approve: ${which}: no one but its author changed its title or body`];
  if (report.held) lines.push(`still held for you: ${report.held}`);
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
