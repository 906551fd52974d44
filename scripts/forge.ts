/**
 * `robot-army forge serve|seed|issue`: the sandbox forge, a GitHub-REST-compatible server
 * on loopback for rehearsals, scenarios, tests and benchmarks, the demo data it serves,
 * and a reader for what was said on an issue there.
 */
import { join, resolve } from "node:path";
import { JSON_OPTION, asJson, asLines, integerOption, runMain, runSubcommand, stringOption, writeStdout } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs, Write } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { seedForge } from "../lib/forge/seed.ts";
import { parseIssueRef } from "../lib/issue-ref.ts";
import { findIssue, findRepo, loadForgeData } from "../lib/forge/state.ts";
import type { ForgeComment, ForgeIssue } from "../lib/forge/state.ts";
import type { SeedResult } from "../lib/forge/seed.ts";
import { startForge } from "../lib/forge/server.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { printable } from "../lib/printable.ts";

const DIR_OPTION = { type: "string", value: "D", description: "The forge's folder (default: <state dir>/forge)" } as const;

const serve: CommandDef = {
  name: "forge serve",
  summary: "Run the sandbox forge until interrupted",
  usage: "forge serve [--dir D] [--port P] [--rate-limit N]",
  description: `\
Serves the part of GitHub's REST API robot-army uses on http://127.0.0.1:PORT, from the
state in D (issues, pull requests, comments, users and their tokens) and the bare git
repositories under D/git. Every request needs "Authorization: token X" with a token from
D/tokens/; answers carry ETags (If-None-Match gets 304, which costs no rate limit) and
x-ratelimit-* headers. As on GitHub, each pull request's head is kept in its bare
repository as refs/pull/<n>/head (fetchable from a clone), also once it is merged or
closed and after its branch is deleted (DELETE /repos/o/r/git/refs/heads/B). Stops
cleanly on SIGINT or SIGTERM. Timestamps follow RA_NOW.

Test hooks, without a token: GET /_forge/stats (request counts by route, 304s; also
written to D/stats.json), POST /_forge/reset-stats, POST /_forge/faults with
{"method":"GET","path":"/repos/o/r/issues","status":502,"times":2} (or "kind":
"secondary-rate-limit", or "delay_ms"), GET|DELETE /_forge/faults, and
POST /_forge/rate-limit with {"remaining":0,"reset":EPOCH_SECONDS}.`,
  options: {
    dir: DIR_OPTION,
    port: { type: "string", value: "P", description: "The port to listen on (default: a free one)" },
    "rate-limit": { type: "string", value: "N", description: "Requests per user per hour (default 5000)" },
  },
  examples: ["robot-army forge serve --port 8787", "robot-army forge serve --dir /tmp/forge --rate-limit 100"],
};

const seed: CommandDef = {
  name: "forge seed",
  summary: "Create a demo repository with labelled issues on the sandbox forge",
  usage: "forge seed [--dir D] [--repo owner/name] [--issues N] [--json]",
  description: `\
Adds the users "owner" (the author robot-army trusts) and "stranger", each with a token in
D/tokens/<login> (mode 0600); the repository with a bare git repository (branch main, one
commit); the label robot-army; N issues by owner with the label, one by stranger with the
label and one by owner without it. Seeding again adds only what is missing. A running
forge picks the changes up.`,
  options: {
    dir: DIR_OPTION,
    repo: { type: "string", value: "owner/name", description: "The repository to create (default demo/widgets)" },
    issues: { type: "string", value: "N", description: "How many labelled issues by owner (default 3, at most 10000)" },
    json: { type: "boolean", description: "Print what was seeded as JSON" },
  },
  examples: ["robot-army forge seed", "robot-army forge seed --repo acme/rockets --issues 5 --json"],
};

const issue: CommandDef = {
  name: "forge issue",
  summary: "Show an issue on the sandbox forge and every comment on it",
  usage: "forge issue <owner/name#N> [--dir D] [--json]",
  description: `\
Reads the forge's state in D (the forge need not be running) and prints the issue or
pull request: its title, author, state and labels, then each comment in the order it was
posted, with its author and time and its text indented below. This is where a rehearsal
shows what robot-army said on an issue. An unknown repository or issue is exit 3.`,
  options: {
    dir: DIR_OPTION,
    json: JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army forge issue demo/widgets#1", "robot-army forge issue demo/widgets#1 --json"],
};

/** The `forge` family. */
export const command: FamilyDef = {
  name: "forge",
  summary: "Run and seed the sandbox forge, a stand-in for GitHub on loopback",
  description: "The sandbox forge lets rehearsals, scenarios, tests and benchmarks talk to GitHub's API without GitHub.",
  subcommands: {
    serve: { command: serve, run: (args) => runServe(serveOptions(args), { write: writeStdout, stopped: untilSignalled }) },
    seed: { command: seed, run: (args) => runSeed(seedOptions(args), { write: writeStdout }) },
    issue: { command: issue, run: (args) => runIssue(issueOptions(args), { write: writeStdout }) },
  },
};

/** Routes argv to the subcommand. */
export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

/** What `forge serve` was asked for. */
export interface ServeOptions {
  dir: string;
  port: number;
  rateLimit: number | undefined;
}

/** What `forge serve` works with: the output, and a promise that settles when it is told to stop (listening from the call on). */
export interface ServeDeps {
  write: Write;
  stopped: () => Promise<void>;
}

/** What `forge seed` was asked for. */
export interface SeedOptions {
  dir: string;
  repo: string;
  issues: number;
  json: boolean;
}

/** What `forge issue` was asked for. */
export interface IssueOptions {
  repo: string;
  number: number;
  dir: string;
  json: boolean;
}

/** The forge's folder: `--dir`, else `<state dir>/forge`. */
export function forgeDir(args: ParsedArgs): string {
  const dir = stringOption(args, "dir");
  return dir === undefined ? join(stateDirPath(), "forge") : resolve(dir);
}

/** `forge serve`'s options: a port of at most 65535 (0 for a free one), and a bad RA_NOW refused before anything listens. */
export function serveOptions(args: ParsedArgs): ServeOptions {
  const port = integerOption(args, "port", 0) ?? 0;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got "${port}"`);
  const rateLimit = integerOption(args, "rate-limit", 1);
  now(); // A bad RA_NOW is a usage error before anything listens.
  return { dir: forgeDir(args), port, rateLimit };
}

/** Serves until told to stop, saying where it listens and when it stopped. */
export async function runServe(opts: ServeOptions, deps: ServeDeps): Promise<number> {
  const { port } = opts;
  const forge = await startForge({ dir: opts.dir, port, rateLimit: opts.rateLimit, now: () => now() }).catch((error) => {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    throw new PreconditionError(`Port ${port} on 127.0.0.1 is in use: pick another with --port P, or --port 0 for a free one`);
  });
  // Listen for the signals before saying where we are: whoever reads that line may stop us at once.
  const stopped = deps.stopped();
  deps.write(asLines(`forge listening on ${forge.url}`));
  await stopped;
  await forge.close();
  deps.write(asLines("forge stopped"));
  return 0;
}

/** Settles on the first SIGINT or SIGTERM after the call: how `forge serve` is stopped. */
function untilSignalled(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** The most issues `forge seed` makes: each is a file on disk and a request per poll, so more would only fill the disk. */
const MAX_SEEDED_ISSUES = 10_000;

/** `forge seed`'s options: the repository (owner/name) and how many labelled issues. */
export function seedOptions(args: ParsedArgs): SeedOptions {
  const repo = stringOption(args, "repo") ?? "demo/widgets";
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new UsageError(`--repo must be owner/name, got "${repo}"`);
  const issues = integerOption(args, "issues", 0, MAX_SEEDED_ISSUES) ?? 3;
  return { dir: forgeDir(args), repo, issues, json: args.values.json === true };
}

/** Seeds the forge and says what it holds and what was new. */
export async function runSeed(opts: SeedOptions, deps: { write: Write }): Promise<number> {
  const result = await seedForge(opts.dir, { repo: opts.repo, issues: opts.issues, now: () => now() });
  deps.write(opts.json ? asJson(result) : asLines(...describeSeed(result)));
  return 0;
}

/** What `forge seed` prints: the repository, the token files, the issues, and what was new. */
export function describeSeed(result: SeedResult): string[] {
  const numbers = (list: number[]) => (list.length ? list.map((n) => `#${n}`).join(" ") : "none");
  const { created } = result;
  const added = created.repository || created.users.length || created.issues.length;
  return [
    `repository  ${result.repository.full_name}  (clone ${result.repository.clone_url}, branch ${result.repository.default_branch})`,
    ...result.users.map((user) => `token       ${user.login}${user.trusted ? " (trusted author)" : ""}  ${user.token_file}`),
    `label       ${result.label}`,
    `issues      labelled by ${result.users[0].login}: ${numbers(result.issues.labelled)}`,
    `            labelled by ${result.users[1].login}: ${numbers(result.issues.stranger)}`,
    `            unlabelled: ${numbers(result.issues.unlabelled)}`,
    added
      ? `seeded      ${[created.repository ? "the repository" : "", created.users.length ? `users ${created.users.join(", ")}` : "", created.issues.length ? `issues ${numbers(created.issues)}` : ""].filter(Boolean).join("; ")}`
      : "seeded      nothing new: everything was already there",
  ];
}

/** `forge issue`'s options: the issue as owner/name#N. */
export function issueOptions(args: ParsedArgs): IssueOptions {
  const ref = parseIssueRef(args.positionals[0]);
  if (!ref) throw new UsageError(`An issue is owner/name#N, such as demo/widgets#1, got "${args.positionals[0]}"`);
  return { repo: ref.repo, number: ref.issue, dir: forgeDir(args), json: args.values.json === true };
}

/** Prints the issue and its comments from the forge's state; an unknown repository or issue is exit 3. */
export async function runIssue(opts: IssueOptions, deps: { write: Write }): Promise<number> {
  const [owner, name] = opts.repo.split("/");
  const { number, dir } = opts;
  const data = loadForgeData(dir);
  const repo = findRepo(data, owner, name);
  if (!repo) throw new PreconditionError(`The forge in "${dir}" has no repository ${owner}/${name}; "robot-army forge seed" creates one`);
  const found = findIssue(repo, number);
  if (!found) throw new PreconditionError(`${repo.owner}/${repo.name} has no issue #${number} on the forge in "${dir}"`);
  const comments = repo.comments.filter((comment) => comment.issue === found.number);
  deps.write(opts.json
    ? asJson({ repo: `${repo.owner}/${repo.name}`, ...issueFields(found), comments: comments.map(commentFields) })
    : asLines(...describeIssue(`${repo.owner}/${repo.name}`, found, comments)));
  return 0;
}

function issueFields(found: ForgeIssue) {
  return {
    number: found.number, title: found.title, user: found.user, state: found.state, labels: found.labels,
    pull_request: found.pull !== undefined, created_at: found.created_at,
  };
}

function commentFields(comment: ForgeComment) {
  return { id: comment.id, user: comment.user, created_at: comment.created_at, body: comment.body };
}

/** What `forge issue` prints: a header line, then each comment with its text indented. */
export function describeIssue(fullName: string, found: ForgeIssue, comments: ForgeComment[]): string[] {
  const kind = found.pull ? "pull request" : "issue";
  const labels = found.labels.length ? found.labels.join(", ") : "none";
  const lines = [
    `${fullName}#${found.number}  ${printable(found.title)}`,
    `${kind} by ${printable(found.user)}, ${found.state}, labels: ${printable(labels)}`,
    comments.length === 1 ? "1 comment" : `${comments.length} comments`,
  ];
  for (const comment of comments) {
    lines.push("", `comment by ${printable(comment.user)} at ${comment.created_at}:`, ...printable(comment.body, { lines: true }).split("\n").map((line) => (line ? `  ${line}` : "")));
  }
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
