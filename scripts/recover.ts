/**
 * `robot-army recover episodes`: closes episodes nobody ended, from evidence. Every open
 * episode is printed with its measurement and verdict, including those nothing happens to.
 */
import { JSON_OPTION, asJson, asLines, runMain, runSubcommand, stringOption, writeStdout } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs, Write } from "../lib/cli.ts";
import { isoSeconds, now } from "../lib/clock.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { auditEffect } from "../lib/store/audit.ts";
import { openStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { formatAge, parseDuration } from "../lib/duration.ts";
import { openJournal, resolveKey, shown } from "../lib/episodes/journal.ts";
import type { Journal } from "../lib/episodes/journal.ts";
import { readLedger } from "../lib/episodes/ledger.ts";
import { listOpen } from "../lib/episodes/open-episodes.ts";
import { recordFile } from "../lib/episodes/records.ts";
import { assessEpisodes, recoverEpisode } from "../lib/episodes/recovery.ts";
import type { Assessment } from "../lib/episodes/recovery.ts";


const episodes: CommandDef = {
  name: "recover episodes",
  summary: "Close stranded episodes into records that say recovery wrote them",
  usage: "recover episodes [--check] [--older-than DURATION] [--json]",
  description:
    "An open episode is stranded when its last sign of life (the latest of its start, its last status\n" +
    "change and its newest ledger line) is older than the threshold and its client process is not alive\n" +
    "on this host (pid and start time; on another host, age alone decides). Stranded episodes are closed\n" +
    "into records with outcome interrupted that claim no commits; a session.recovered ledger event names\n" +
    "each. Live episodes are untouched; one whose last sign of life cannot be read is skipped and counted.\n" +
    "Each closing is written to the audit log as an intent and an outcome (robot-army log --kind episode.).",
  options: {
    check: { type: "boolean", description: "Write nothing: print what would be done" },
    "older-than": { type: "string", value: "DURATION", description: "Silence after which an episode may be stranded (default: episodes.stranded_after, 12h)" },
    json: JSON_OPTION,
    config: CONFIG_OPTION,
  },
  examples: ["robot-army recover episodes --check", "robot-army recover episodes --older-than 2h"],
};

/** What `recover episodes` was asked for: check only or act, and the silence after which an episode may be stranded. */
export interface EpisodesOptions {
  check: boolean;
  /** The threshold as given (or configured), as the report shows it. */
  threshold: string;
  thresholdMs: number;
  json: boolean;
}

/** What `recover episodes` works with: the repository, the store (opened only when something is closed), and the output. */
export interface RecoverDeps {
  cwd: string;
  openStore: () => Promise<Store>;
  write: Write;
}

/** The `recover` family. */
export const command: FamilyDef = {
  name: "recover",
  summary: "Close what a crash left open, from evidence",
  subcommands: {
    episodes: {
      command: episodes,
      run: async (args) => runEpisodes(await episodesOptions(args), { cwd: process.cwd(), openStore: () => openStore(ensureStateDir()), write: writeStdout }),
    },
  },
};

/** Routes argv to the subcommand. */
export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

/** `recover episodes`'s options: --older-than, else the configured episodes.stranded_after. */
export async function episodesOptions(args: ParsedArgs): Promise<EpisodesOptions> {
  const threshold = stringOption(args, "older-than") ?? (await configFromArgs(args)).episodes.stranded_after;
  return { check: args.values.check === true, threshold, thresholdMs: parseDuration(threshold, "--older-than"), json: args.values.json === true };
}

/** Assesses every open episode and closes the stranded ones (audited), or says what it would do with --check. */
export async function runEpisodes(opts: EpisodesOptions, deps: RecoverDeps): Promise<number> {
  const { check, thresholdMs } = opts;
  const at = now();
  const journal = await openJournal(deps.cwd, { forWrite: !check });
  const assessments = assessEpisodes(await listOpen(journal), await readLedger(journal), {
    now: at, thresholdMs, ownKey: resolveKey(undefined),
  });
  const stranded = assessments.filter((a) => a.verdict.kind === "stranded");
  const skipped = assessments.filter((a) => a.verdict.kind === "skipped").length;
  const records = new Map<Assessment, string>();
  if (!check && stranded.length) {
    const store = await deps.openStore();
    try {
      for (const assessment of stranded) {
        const episode = assessment.entry.episode!;
        const evidence = assessment.verdict.kind === "stranded" ? assessment.verdict.evidence : "";
        const recovered = await auditEffect(
          store,
          { kind: "episode.recovered", episodeId: episode.id, body: { repository: journal.root, key: episode.key, evidence } },
          () => recoverEpisode(journal, assessment, { now: at, thresholdMs }),
          (result) => result ? { record: shown(journal, result.recordFile) } : { left_open: "it changed while recovery ran" },
        );
        if (recovered) records.set(assessment, shown(journal, recovered.recordFile));
      }
    } finally {
      store.close();
    }
  }
  if (opts.json) {
    deps.write(asJson({
      check, threshold: opts.threshold, now: isoSeconds(at),
      candidates: assessments.map((a) => toJson(journal, a, records.get(a))),
      actions: check ? stranded.length : records.size, skipped,
    }));
    return 0;
  }
  const lines: string[] = [];
  if (assessments.length === 0) lines.push("no open episodes");
  for (const assessment of assessments) lines.push(...describe(journal, assessment, at, check, records.get(assessment)));
  if (skipped) lines.push(`skipped: ${skipped} episode(s) that cannot be measured; none of them is closed`);
  const actions = check ? stranded.length : records.size;
  const lost = stranded.length - records.size;
  if (!check && lost > 0) lines.push(`left open: ${lost} episode(s) changed while recovery ran; run it again`);
  lines.push(actions === 0 ? "nothing to recover" : `${check ? "check" : "recovered"}: ${actions} action(s)`);
  deps.write(asLines(...lines));
  return 0;
}

function measurement(a: Assessment, at: Date): string {
  const episode = a.entry.episode;
  if (!episode) return `${a.entry.key}  unreadable file`;
  const seen = a.lastSeen && "at" in a.lastSeen
    ? `last seen ${isoSeconds(a.lastSeen.at)} (${formatAge(at.getTime() - a.lastSeen.at.getTime())} ago)`
    : "last seen unreadable";
  const client = a.client === undefined ? `client on ${episode.host}` : `client pid ${episode.client.pid} ${a.client}`;
  return `${episode.key}  episode ${episode.id}  ${seen}, ${client}`;
}

function describe(journal: Journal, a: Assessment, at: Date, check: boolean, record: string | undefined): string[] {
  const lines = [measurement(a, at)];
  const verdict = a.verdict;
  if (verdict.kind === "stranded") {
    lines.push(`  stranded: ${a.entry.episode!.id} (${verdict.evidence})`);
    if (check) lines.push(`  would close it into ${shown(journal, recordFile(journal, a.entry.episode!))}`);
    else if (record) lines.push(`  closed into ${record}`);
    else lines.push("  left open: it changed while recovery ran");
  } else {
    lines.push(`  ${verdict.kind}: ${verdict.reason}`);
  }
  return lines;
}

function toJson(journal: Journal, a: Assessment, record: string | undefined) {
  const episode = a.entry.episode;
  return {
    key: a.entry.key,
    file: shown(journal, a.entry.file),
    id: episode?.id ?? null,
    last_seen: a.lastSeen && "at" in a.lastSeen ? isoSeconds(a.lastSeen.at) : null,
    client: a.client ?? (episode ? "other-host" : null),
    verdict: a.verdict.kind,
    reason: a.verdict.kind === "stranded" ? a.verdict.evidence : a.verdict.reason,
    record: record ?? null,
  };
}


if (import.meta.main) await runMain(main, process.argv.slice(2));
