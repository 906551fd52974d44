/**
 * `robot-army trust owner/name`: record the owner's trust in a repository's clone where the
 * worker's agent keeps it (Claude Code's or Codex's folder-trust answer), so its workers open
 * without stopping at the agent's folder-trust question. `--check` only reads it.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, asLines, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { describeTrust, recordTrust, trustStoreFor, trusts } from "../lib/dispatch/agent-trust.ts";
import type { TrustAnswer, TrustStore } from "../lib/dispatch/agent-trust.ts";
import { EFFECT_LEVEL_OPTIONS, effectsFor, SIMULATED_GITHUB } from "../lib/effects.ts";
import type { Effects } from "../lib/effects.ts";
import { EXIT, PreconditionError, UsageError } from "../lib/errors.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { auditEffect } from "../lib/store/audit.ts";
import { withStore } from "../lib/store/open.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "trust",
  summary: "Record your trust in a repository's clone for its workers' agent (Claude Code's or Codex's folder trust)",
  usage: "trust owner/name [--check] [--effect-level L] [--config FILE] [--json]",
  description: `\
Claude Code asks "Is this a project you trust?", and Codex "Trust this folder?", in a folder
they have not been told to trust, and run none of their hooks until the question is
answered: a worker waiting there works on nothing, and robot-army sees no start from it.
Each keeps your answer for a git repository's clone, and that answer holds for every
worktree of the clone, so one yes covers every worker robot-army starts for the repository:
Claude Code in ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json) as
projects["<clone>"].hasTrustDialogAccepted, Codex in ~/.codex/config.toml (or
$CODEX_HOME/config.toml) as [projects."<clone>"] trust_level = "trusted".

This command records that yes for the clone named by [repos."owner/name"] path, for the agent
of [worker] profile, as the agent itself would, keeping everything else in the file (Codex's
file gains one table at its end). It is never written without you:
robot-army asks for it nowhere else. Recording it is audited (agent.trust); below effect
level local it says what it would record. --check only reads the answer (exit 4 when the
clone is not trusted). Trust a repository only when you would answer yes in its folder
yourself: its committed settings (.claude/settings.json hooks, .mcp.json, .codex/) run in
every worker, which is why onboard fingerprints them.
`,
  options: {
    check: { type: "boolean", description: "Only read whether the clone is trusted (exit 4 when not)" },
    ...EFFECT_LEVEL_OPTIONS,
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army trust octo-org/widgets", "robot-army trust octo-org/widgets --check"],
};

/** What `trust` reads and writes. */
export interface TrustDeps {
  config: Config;
  /** What is real at the level the command runs at: the owner's files are written from local. */
  effects: Pick<Effects, "ownerFiles" | "level">;
  env: Record<string, string | undefined>;
  /** Where the store is that the record is audited in. */
  stateDir: () => string;
  write: Write;
}

/** What `trust` did, as `--json` prints it. */
export interface TrustReport {
  repo: string;
  /** The worker profile's agent whose answer this is. */
  agent: TrustStore["agent"];
  folder: string;
  file: string;
  /** Before this command: trusted, not, or why it cannot be told. */
  was: TrustAnswer;
  result: "trusted" | "recorded" | "would record" | "not trusted" | "unknown";
  /** The effect level it ran at. */
  level: string;
}

export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  const deps: TrustDeps = { config, effects: effectsFor(args, config, { github: SIMULATED_GITHUB }), env: process.env, stateDir: () => ensureStateDir(), write: writeStdout };
  return await run({ repo: args.positionals[0], check: args.values.check === true, json: args.values.json === true }, deps);
}

/** Reads, and unless checking, records the trust of the repository's clone. */
export async function run(opts: { repo: string; check: boolean; json: boolean }, deps: TrustDeps): Promise<number> {
  const repo = deps.config.repos[opts.repo];
  if (!repo) throw new UsageError(`Repository "${opts.repo}" is not in the config: add a [repos."${opts.repo}"] table with the path of its clone`);
  const store = trustStoreFor(deps.config.worker.profile, deps.env);
  if (!store) {
    throw new PreconditionError(`[worker] profile is ${deps.config.worker.profile}: its agent asks no folder-trust question; robot-army records folder trust for Claude Code (profile claude) and Codex (profile codex)`);
  }
  const { file } = store;
  const was = trusts(store, repo.path);
  const report: TrustReport = { repo: opts.repo, agent: store.agent, folder: repo.path, file, was, level: deps.effects.level, result: was.trusted === true ? "trusted" : was.trusted === false ? "not trusted" : "unknown" };
  if (!opts.check && was.trusted !== true) {
    if (was.trusted === "unknown") throw new PreconditionError(describeTrust(opts.repo, repo.path, was, store));
    report.result = deps.effects.ownerFiles ? await record(deps.stateDir(), opts.repo, repo.path, store) : "would record";
  }
  deps.write(opts.json ? asJson(report) : asLines(lineOf(report, store)));
  // A check that finds the clone not trusted (or cannot tell) exits 4: a difference, said above.
  return opts.check && was.trusted !== true ? EXIT.checkFailed : EXIT.ok;
}

/** Records the trust, audited in the store (DESIGN rule 3). */
async function record(stateDir: string, repo: string, folder: string, trustStore: TrustStore): Promise<"recorded"> {
  return await withStore(stateDir, async (store) => await auditEffect(
    store,
    { kind: "agent.trust", repo, body: { agent: trustStore.agent, file: trustStore.file, folder } },
    async () => {
      recordTrust(trustStore, folder);
      return "recorded" as const;
    },
    () => ({ recorded: true }),
  ));
}

function lineOf(report: TrustReport, store: TrustStore): string {
  switch (report.result) {
    case "recorded":
      return `recorded: ${store.name} trusts ${report.folder} (${report.repo}) in ${report.file}; its workers open without the folder-trust question`;
    case "would record":
      return `would record ${store.name}'s trust in ${report.folder} (${report.repo}) in ${report.file} (effect level ${report.level}: nothing written)`;
    default:
      return describeTrust(report.repo, report.folder, report.was, store);
  }
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
