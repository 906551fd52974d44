/**
 * `robot-army episode start|status|idle|busy|end`: the episodes a worker declares in the
 * repository it works in. The supervisor measures idleness from them; a closed episode
 * becomes a record under `.ai/repo/sessions/`.
 */
import { JSON_OPTION, runSubcommand, helpText, integerOption, print, printJson, runMain, stringOption } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs } from "../lib/cli.ts";
import { CALLER_PID } from "../lib/caller.ts";
import { now } from "../lib/clock.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { describeEpisode, viewEpisodes } from "../lib/episodes/describe.ts";
import { openJournal, resolveKey, shown } from "../lib/episodes/journal.ts";
import { readLedger } from "../lib/episodes/ledger.ts";
import { endEpisode, setStatus, startEpisode } from "../lib/episodes/lifecycle.ts";
import { findOpen, listOpen } from "../lib/episodes/open-episodes.ts";

const KEY_OPTION = { type: "string", value: "K", description: "The episode's key (default: $RA_EPISODE_KEY)" } as const;

const start: CommandDef = {
  name: "episode start",
  summary: "Open an episode in this repository",
  usage: "episode start [--key K] [--client-pid PID] [--json]",
  description:
    "Writes .ai/local/state/sessions-open/<K>.yaml with a new episode id, the key, this host, the client's pid\n" +
    "and process start time, the branch, the start commit and status busy, and logs episode.start in the\n" +
    "ledger. The client is the agent process the episode belongs to: by default the process that ran this\n" +
    "command. From an agent's hook, pass the agent: --client-pid $PPID. A key that is already open is\n" +
    "refused (exit 3).",
  options: {
    key: KEY_OPTION,
    "client-pid": { type: "string", value: "PID", description: "The agent process this episode belongs to (default: the parent process)" },
    json: JSON_OPTION,
  },
  examples: ["RA_EPISODE_KEY=issue-42 robot-army episode start", "robot-army episode start --key w1 --client-pid $PPID"],
};

const status: CommandDef = {
  name: "episode status",
  summary: "Show the open episode this process belongs to, or all of them",
  usage: "episode status [--key K | --all] [--json]",
  description: "Shows status, when it last changed, the last sign of life and whether the client still runs.",
  options: { key: KEY_OPTION, all: { type: "boolean", description: "Show every open episode" }, json: JSON_OPTION },
};

const statusChange = (which: "idle" | "busy"): CommandDef => ({
  name: `episode ${which}`,
  summary: which === "idle" ? "Mark the episode idle (waiting at its prompt)" : "Mark the episode busy (working)",
  usage: `episode ${which} [--key K]`,
  description: `Sets the status to ${which} and records when, which also counts as a sign of life.`,
  options: { key: KEY_OPTION },
});

const end: CommandDef = {
  name: "episode end",
  summary: "Close the episode into a record under .ai/repo/sessions/",
  usage: "episode end [--key K] [--outcome O] [--json]",
  description:
    "Writes .ai/repo/sessions/<started>--<id>.md: front matter with the id, key, start and end times, the\n" +
    "outcome, the commits between the start commit and HEAD and the files they changed; then logs episode.end\n" +
    "in the ledger and removes the open file.",
  options: {
    key: KEY_OPTION,
    outcome: { type: "string", value: "O", description: "How the work ended, e.g. done, blocked, handed-off (default: done)" },
    json: JSON_OPTION,
  },
};

/** The `episode` family. */
export const command: FamilyDef = {
  name: "episode",
  summary: "Open, inspect and close the work journal's episodes",
  description: "An episode is a stretch of work a worker declares in the repository it works in.",
  subcommands: {
    start: { command: start, run: runStart },
    status: { command: status, run: runStatus },
    idle: { command: statusChange("idle"), run: (args) => runStatusChange(args, "idle") },
    busy: { command: statusChange("busy"), run: (args) => runStatusChange(args, "busy") },
    end: { command: end, run: runEnd },
  },
};

export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

function requireKey(args: ParsedArgs, def: CommandDef): string {
  const key = resolveKey(stringOption(args, "key"));
  if (!key) throw new UsageError("No episode key: pass --key K or set RA_EPISODE_KEY", helpText(def));
  return key;
}

async function runStart(args: ParsedArgs): Promise<number> {
  const key = requireKey(args, start);
  const clientPid = integerOption(args, "client-pid", 2) ?? CALLER_PID;
  const journal = await openJournal(process.cwd(), { forWrite: true });
  const episode = await startEpisode(journal, { key, clientPid, now: now() });
  if (args.values.json) {
    printJson(episode);
  } else {
    print(`started episode ${episode.id} (key ${key}, ${episode.status})`);
    if (!episode.client.started_at) {
      process.stderr.write(`robot-army: warning: client pid ${clientPid} is not running here, so recovery will not count it as alive\n`);
    }
  }
  return 0;
}

async function runStatus(args: ParsedArgs): Promise<number> {
  const journal = await openJournal(process.cwd());
  const all = args.values.all === true;
  if (all && args.values.key) throw new UsageError("--all and --key cannot be used together", helpText(status));
  let entries;
  if (all) {
    entries = await listOpen(journal);
  } else {
    const key = requireKey(args, status);
    const entry = await findOpen(journal, key);
    if (!entry) throw new PreconditionError(`No open episode with key "${key}"; "robot-army episode status --all" lists the open ones`);
    entries = [entry];
  }
  const views = viewEpisodes(journal, entries, await readLedger(journal), now());
  if (args.values.json) {
    printJson(views);
  } else if (views.length === 0) {
    print("no open episodes");
  } else {
    print(...views.flatMap((view, index) => [...(index ? [""] : []), ...describeEpisode(view)]));
  }
  return 0;
}

async function runStatusChange(args: ParsedArgs, which: "idle" | "busy"): Promise<number> {
  const key = requireKey(args, statusChange(which));
  const journal = await openJournal(process.cwd(), { forWrite: true });
  const episode = await setStatus(journal, { key, status: which, now: now() });
  print(`episode ${episode.id} (key ${key}) is ${which} since ${episode.status_changed_at}`);
  return 0;
}

async function runEnd(args: ParsedArgs): Promise<number> {
  const key = requireKey(args, end);
  const outcome = stringOption(args, "outcome") ?? "done";
  if (!/^[a-z][a-z0-9_-]{0,63}$/.test(outcome)) {
    throw new UsageError(`--outcome "${outcome}" must be a lower-case word such as done, blocked or handed-off`);
  }
  const journal = await openJournal(process.cwd(), { forWrite: true });
  const result = await endEpisode(journal, { key, outcome, now: now() });
  const record = shown(journal, result.recordFile);
  if (args.values.json) {
    printJson({ id: result.episode.id, key, outcome, record, commits: result.commits, changed_files: result.changedFiles });
  } else {
    const commits = result.commits === null ? "commits could not be listed" : `${result.commits.length} commit(s), ${result.changedFiles!.length} changed file(s)`;
    print(`ended episode ${result.episode.id} (key ${key}, outcome ${outcome}): ${commits}`, `record: ${record}`);
  }
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
