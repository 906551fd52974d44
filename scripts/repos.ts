/**
 * `robot-army repos`: the configured repositories with their onboarding state, clone path
 * and live work items. The settings of every onboarded repository are read from GitHub
 * again, so a change is seen here (and the repository then needs reapproval).
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, asLines, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { describeChanges } from "../lib/repos/fingerprint.ts";
import type { SettingChange } from "../lib/repos/fingerprint.ts";
import { checkFingerprint } from "../lib/repos/onboard.ts";
import { listRepoRecords, pendingChanges } from "../lib/repos/records.ts";
import type { OnboardingState } from "../lib/repos/records.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { WORK_ITEM_STATES, listItems } from "../lib/work-items/queries.ts";
import type { WorkItemState } from "../lib/work-items/queries.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "repos",
  summary: "List repositories with their onboarding state and live work items",
  usage: "repos [--config FILE] [--json]",
  description: `\
Lists every [repos."owner/name"] of the config, and any onboarded repository the config
no longer names: its onboarding state (not onboarded, onboarded at <time>, or needs
reapproval with the settings that changed), the path of its clone, its priority, and its
live work items (those not done or abandoned), simulated ones counted apart.

The settings of each onboarded repository are read from GitHub again and compared with
the approved fingerprint; a difference makes it need reapproval (robot-army onboard
owner/name --reapprove) and nothing is dispatched to it until then. When GitHub cannot
be read, the recorded state is shown and says it was not checked.
`,
  options: {
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  examples: ["robot-army repos", "robot-army repos --json"],
};

/** What `repos` reads: the config, the store if any, and a way to reach GitHub when a check needs it. */
export interface ReposDeps {
  config: Config;
  store: Store | undefined;
  connect: () => Promise<Pick<GitHubReader, "getRepository">>;
  write: Write;
}

/** One repository, as `--json` prints it. */
export interface RepoLine {
  repo: string;
  in_config: boolean;
  state: OnboardingState | "not_onboarded";
  onboarded_at: string | null;
  /** Settings that differ from the approved ones (needs_reapproval). */
  changes: SettingChange[];
  /** Whether the settings were read from GitHub now, and the error when they could not be. */
  checked: boolean;
  check_error: string | null;
  path: string | null;
  priority: number | null;
  max_sessions: number | null;
  live_items: number;
  by_state: Partial<Record<WorkItemState, number>>;
  simulated_live_items: number;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    const connect = async () => (await import("../lib/boundaries/github.ts")).connectGitHub(config, store ?? null);
    return await run({ json: args.values.json === true }, { config, store, connect, write: writeStdout });
  });
}

/** Checks the onboarded repositories' settings, then lists every repository. */
export async function run(opts: { json: boolean }, deps: ReposDeps): Promise<number> {
  const lines = await repoLines(deps);
  deps.write(opts.json ? asJson(lines) : asLines(...formatRepos(lines)));
  return 0;
}

/** The configured repositories in config order, then onboarded ones the config no longer names. */
export async function repoLines(deps: Pick<ReposDeps, "config" | "store" | "connect">): Promise<RepoLine[]> {
  const { config, store } = deps;
  const records = new Map((store ? listRepoRecords(store) : []).map((r) => [r.name, r]));
  const items = store ? listItems(store, { states: LIVE_STATES, includeSimulated: true }) : [];
  let github: Promise<Pick<GitHubReader, "getRepository">> | undefined;
  const lines: RepoLine[] = [];
  const names = [...Object.keys(config.repos), ...[...records.keys()].filter((name) => !Object.hasOwn(config.repos, name))];
  for (const name of names) {
    const repo = Object.hasOwn(config.repos, name) ? config.repos[name] : undefined;
    let record = records.get(name);
    let checkError: string | null = null;
    if (record && repo && store) {
      try {
        github ??= deps.connect();
        await checkFingerprint(store, await github, { name, path: repo.path });
        record = listRepoRecords(store).find((r) => r.name === name);
      } catch (error) {
        checkError = error instanceof Error ? error.message : String(error);
      }
    }
    const own = items.filter((item) => item.repo === name);
    const real = own.filter((item) => !item.simulated);
    const byState: Partial<Record<WorkItemState, number>> = {};
    for (const state of LIVE_STATES) {
      const n = real.filter((item) => item.state === state).length;
      if (n) byState[state] = n;
    }
    lines.push({
      repo: name,
      in_config: repo !== undefined,
      state: record?.state ?? "not_onboarded",
      onboarded_at: record?.onboarded_at ?? null,
      changes: record ? pendingChanges(record) : [],
      checked: record !== undefined && repo !== undefined && checkError === null,
      check_error: checkError,
      path: repo?.path ?? record?.path ?? null,
      priority: repo?.priority ?? null,
      max_sessions: repo?.max_sessions ?? null,
      live_items: real.length,
      by_state: byState,
      simulated_live_items: own.length - real.length,
    });
  }
  return lines;
}

/** The repositories as lines of text. */
export function formatRepos(lines: RepoLine[]): string[] {
  if (lines.length === 0) {
    return ['no repositories: add a [repos."owner/name"] table with the path of its clone to the config, then run "robot-army onboard owner/name"'];
  }
  const out: string[] = [];
  for (const line of lines) {
    out.push(`${line.repo}  ${stateText(line)}`);
    if (!line.in_config) out.push("  config     not in the config any more: nothing is dispatched to it");
    if (line.check_error) out.push(`  settings   not checked now: ${line.check_error}`);
    if (line.path) out.push(`  path       ${line.path}`);
    if (line.priority !== null) out.push(`  priority   ${line.priority}, at most ${line.max_sessions} session${line.max_sessions === 1 ? "" : "s"}`);
    out.push(`  items      ${itemsText(line)}`);
  }
  return out;
}

const LIVE_STATES = WORK_ITEM_STATES.filter((state) => state !== "done" && state !== "abandoned");

function stateText(line: RepoLine): string {
  if (line.state === "not_onboarded") return `not onboarded: "robot-army onboard ${line.repo}" approves it`;
  if (line.state === "onboarded") return `onboarded at ${line.onboarded_at}`;
  const what = line.changes.length ? describeChanges(line.changes) : "settings changed and are back as approved";
  return `needs reapproval: ${what}; "robot-army onboard ${line.repo} --reapprove" approves the settings as they are`;
}

function itemsText(line: RepoLine): string {
  const states = Object.entries(line.by_state).map(([state, n]) => `${state} ${n}`).join(", ");
  const live = line.live_items === 0 ? "no live items" : `${line.live_items} live (${states})`;
  return line.simulated_live_items ? `${live}; ${line.simulated_live_items} simulated` : live;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
