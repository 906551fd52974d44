/**
 * `robot-army forge serve|seed|issue|comment|review|check|close|block`: the sandbox forge, a
 * GitHub-REST-compatible server on loopback for rehearsals, scenarios, tests and benchmarks,
 * the demo data it serves, a reader for what was said on an issue there, and its users' acts
 * (a comment, a review, a check's result, a close, a dependency) for a scenario to play them.
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
import { actAs } from "../lib/forge/act.ts";
import type { ReviewEvent } from "../lib/forge/act.ts";
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

/** Who acts, and on which forge: the options every acting subcommand takes. */
const ACT_OPTIONS = {
  api: { type: "string", value: "URL", description: "The running forge's address, as `forge serve` printed it (required)" },
  as: { type: "string", value: "LOGIN", description: "Whose token acts, from D/tokens/LOGIN (default owner)" },
  dir: DIR_OPTION,
} as const;

/** The forge's users' acts, for scenarios and rehearsals to play the owner, a reviewer or a stranger. */
const ACTS: Record<string, CommandDef> = {
  comment: {
    name: "forge comment", summary: "Comment on an issue or pull request on a running sandbox forge, as one of its users",
    usage: "forge comment <owner/name#N> TEXT --api URL [--as LOGIN] [--dir D]",
    description: "Posts TEXT as a comment on the issue or pull request, with LOGIN's token, through the forge's API.",
    positionals: { min: 2, max: 2 }, options: ACT_OPTIONS,
    examples: ['robot-army forge comment demo/widgets#1 "Also update the README." --api http://127.0.0.1:8787'],
  },
  review: {
    name: "forge review", summary: "Review a pull request on a running sandbox forge, as one of its users",
    usage: "forge review <owner/name#N> TEXT --api URL [--event comment|request-changes|approve] [--as LOGIN] [--dir D]",
    description: "Submits a review of the pull request with TEXT as its words: a comment (the default), a change request or an\napproval. As on GitHub, no one may request changes on, or approve, their own pull request.",
    positionals: { min: 2, max: 2 },
    options: { ...ACT_OPTIONS, event: { type: "string", value: "E", description: "comment, request-changes or approve (default comment)" } },
    examples: ['robot-army forge review demo/widgets#6 "Rename foo." --event request-changes --as stranger --api http://127.0.0.1:8787'],
  },
  check: {
    name: "forge check", summary: "Report a finished check run on a pull request's head on a running sandbox forge",
    usage: "forge check <owner/name#N> NAME --api URL [--conclusion C] [--url U] [--title T] [--as LOGIN] [--dir D]",
    description: "Creates a completed check run named NAME on the pull request's head commit, as the forge's CI app reports one\n(LOGIN needs push access).",
    positionals: { min: 2, max: 2 },
    options: {
      ...ACT_OPTIONS,
      conclusion: { type: "string", value: "C", description: "failure (the default), success, timed_out, cancelled, neutral, skipped or action_required" },
      url: { type: "string", value: "U", description: "Where its log is (details_url)" },
      title: { type: "string", value: "T", description: "Its output's title" },
    },
    examples: ["robot-army forge check demo/widgets#6 tests --title '2 tests failed' --api http://127.0.0.1:8787"],
  },
  close: {
    name: "forge close", summary: "Close an issue or pull request on a running sandbox forge",
    usage: "forge close <owner/name#N> --api URL [--as LOGIN] [--dir D]",
    description: "Closes the issue (or pull request, unmerged) with LOGIN's token.",
    positionals: { min: 1, max: 1 }, options: ACT_OPTIONS,
    examples: ["robot-army forge close demo/widgets#3 --api http://127.0.0.1:8787"],
  },
  block: {
    name: "forge block", summary: "Mark an issue as blocked by another on a running sandbox forge (issue dependencies)",
    usage: "forge block <owner/name#N> --by M --api URL [--as LOGIN] [--dir D]",
    description: "Records, as GitHub's issue dependencies do, that issue N is blocked by issue M of the same repository.",
    positionals: { min: 1, max: 1 },
    options: { ...ACT_OPTIONS, by: { type: "string", value: "M", description: "The blocking issue's number (required)" } },
    examples: ["robot-army forge block demo/widgets#1 --by 3 --api http://127.0.0.1:8787"],
  },
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
    ...Object.fromEntries(Object.entries(ACTS).map(([name, def]) => [name, { command: def, run: (args: ParsedArgs) => runAct(actOptions(name, args), { write: writeStdout }) }])),
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

const REVIEW_EVENTS: Record<string, ReviewEvent> = { comment: "COMMENT", "request-changes": "REQUEST_CHANGES", approve: "APPROVE" };
const REVIEW_WORDS: Record<ReviewEvent, string> = { COMMENT: "with comments", REQUEST_CHANGES: "requesting changes", APPROVE: "approving it" };

/** What one of the forge's acts was asked for. */
export interface ActOptions {
  act: string;
  repo: string;
  number: number;
  /** The comment's or review's words, or the check's name. */
  text: string;
  api: string;
  login: string;
  dir: string;
  event?: ReviewEvent;
  by?: number;
  conclusion: string;
  url?: string;
  title?: string;
}

/** An act's options: the issue as owner/name#N, `--api` required, `--as` a login, a review's event, a block's `--by`. */
export function actOptions(act: string, args: ParsedArgs): ActOptions {
  const ref = parseIssueRef(args.positionals[0]);
  if (!ref) throw new UsageError(`An issue is owner/name#N, such as demo/widgets#1, got "${args.positionals[0]}"`);
  const api = stringOption(args, "api");
  if (!api) throw new UsageError(`forge ${act} needs --api URL, the running forge's address`);
  const login = stringOption(args, "as") ?? "owner";
  if (!/^[A-Za-z0-9-]+$/.test(login)) throw new UsageError(`--as must be a login, got "${login}"`);
  const event = act === "review" ? REVIEW_EVENTS[stringOption(args, "event") ?? "comment"] : undefined;
  if (act === "review" && !event) throw new UsageError(`--event must be comment, request-changes or approve, got "${stringOption(args, "event")}"`);
  const by = act === "block" ? integerOption(args, "by", 1) : undefined;
  if (act === "block" && by === undefined) throw new UsageError("forge block needs --by M, the blocking issue's number");
  return {
    act, repo: ref.repo, number: ref.issue, text: args.positionals[1] ?? "", api, login, dir: forgeDir(args), event, by,
    conclusion: stringOption(args, "conclusion") ?? "failure", url: stringOption(args, "url"), title: stringOption(args, "title"),
  };
}

/** Runs one of the forge's acts as `--as` on the forge at `--api`, and says what was done in one line. */
export async function runAct(opts: ActOptions, deps: { write: Write }): Promise<number> {
  const { act, repo, number, text, login } = opts;
  const hand = await actAs({ apiBase: opts.api, tokenFile: join(opts.dir, "tokens", login) }).catch((error: unknown) => {
    throw new PreconditionError(`Cannot act as ${login} on the forge at ${opts.api}: ${error instanceof Error ? error.message : String(error)}`);
  });
  const where = `${repo}#${number}`;
  const said = await (async () => {
    switch (act) {
      case "comment":
        return `${login} commented on ${where}: ${(await hand.comment(repo, number, text)).url}`;
      case "review":
        return `${login} reviewed ${where}, ${REVIEW_WORDS[opts.event!]}: ${(await hand.review(repo, number, { event: opts.event!, body: text })).url}`;
      case "check": {
        const made = await hand.check(repo, number, { name: text, conclusion: opts.conclusion, url: opts.url, title: opts.title });
        return `check "${text}" on ${where}'s head ${made.sha.slice(0, 7)}: ${opts.conclusion}`;
      }
      case "close":
        await hand.close(repo, number);
        return `${login} closed ${where}`;
      default:
        await hand.block(repo, number, opts.by!);
        return `${where} is blocked by ${repo}#${opts.by}`;
    }
  })().catch((error: unknown) => {
    const e = error as { status?: number; message?: string };
    throw new PreconditionError(`The forge refused: ${e.status ? `${e.status} ` : ""}${e.message ?? String(error)}`);
  });
  deps.write(asLines(said));
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
