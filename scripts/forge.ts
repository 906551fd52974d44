/**
 * `robot-army forge serve|seed`: the sandbox forge, a GitHub-REST-compatible server on
 * loopback for rehearsals, scenarios, tests and benchmarks, and the demo data it serves.
 */
import { join, resolve } from "node:path";
import { dispatch, integerOption, print, printJson, runMain, stringOption } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { seedForge } from "../lib/forge/seed.ts";
import type { SeedResult } from "../lib/forge/seed.ts";
import { startForge } from "../lib/forge/server.ts";
import { stateDirPath } from "../lib/state-dir.ts";

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
x-ratelimit-* headers. Stops cleanly on SIGINT or SIGTERM. Timestamps follow RA_NOW.

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
    issues: { type: "string", value: "N", description: "How many labelled issues by owner (default 3)" },
    json: { type: "boolean", description: "Print what was seeded as JSON" },
  },
  examples: ["robot-army forge seed", "robot-army forge seed --repo acme/rockets --issues 5 --json"],
};

/** The `forge` family. */
export const command: FamilyDef = {
  name: "forge",
  summary: "Run and seed the sandbox forge, a stand-in for GitHub on loopback",
  description: "The sandbox forge lets rehearsals, scenarios, tests and benchmarks talk to GitHub's API without GitHub.",
  subcommands: {
    serve: { command: serve, run: runServe },
    seed: { command: seed, run: runSeed },
  },
};

export function main(argv: string[]): Promise<number> {
  return dispatch(command, argv);
}

/** The forge's folder: `--dir`, else `<state dir>/forge`. */
export function forgeDir(args: ParsedArgs): string {
  const dir = stringOption(args, "dir");
  return dir === undefined ? join(stateDirPath(), "forge") : resolve(dir);
}

async function runServe(args: ParsedArgs): Promise<number> {
  const port = integerOption(args, "port", 0) ?? 0;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got "${port}"`);
  const rateLimit = integerOption(args, "rate-limit", 1);
  now(); // A bad RA_NOW is a usage error before anything listens.
  const forge = await startForge({ dir: forgeDir(args), port, rateLimit, now: () => now() }).catch((error) => {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    throw new PreconditionError(`Port ${port} on 127.0.0.1 is in use: pick another with --port P, or --port 0 for a free one`);
  });
  // Listen for the signals before saying where we are: whoever reads that line may stop us at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  print(`forge listening on ${forge.url}`);
  await stopped;
  await forge.close();
  print("forge stopped");
  return 0;
}

async function runSeed(args: ParsedArgs): Promise<number> {
  const repo = stringOption(args, "repo") ?? "demo/widgets";
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new UsageError(`--repo must be owner/name, got "${repo}"`);
  const issues = integerOption(args, "issues", 0) ?? 3;
  const result = await seedForge(forgeDir(args), { repo, issues, now: () => now() });
  if (args.values.json) printJson(result);
  else print(...describeSeed(result));
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

if (import.meta.main) await runMain(main, process.argv.slice(2));
