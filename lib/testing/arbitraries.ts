/**
 * fast-check arbitraries for the files robot-army writes, shared by the property tests of
 * their readers: each makes values as the writer makes them.
 */
import fc from "fast-check";
import type { Episode } from "../episodes/open-episodes.ts";
import type { LedgerEvent } from "../episodes/ledger.ts";
import type { EpisodeRecord } from "../episodes/records.ts";
import type { SessionRecord } from "../sessions/records.ts";

/** An ISO time to the second, as isoSeconds writes one. */
export const timeArb = fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z"));
const textArb = fc.string({ maxLength: 20 });
const mapArb = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "__proto__"), textArb, { maxKeys: 4 });
const pidArb = fc.option(fc.integer({ min: 1, max: 4_194_304 }), { nil: null });

/** A session record as a holder writes one, in any state of its life. */
export const sessionRecordArb: fc.Arbitrary<SessionRecord> = fc.record({
  schema: fc.constant(1 as const), id: fc.uuid(), name: fc.string({ minLength: 1, maxLength: 20 }), command: textArb,
  args: fc.array(textArb, { maxLength: 4 }), cwd: textArb, env: mapArb, tags: mapArb,
  permanent: fc.boolean(), ephemeral: fc.boolean(), generation: fc.integer({ min: 1, max: 1000 }), startedAt: timeArb,
  holderPid: pidArb, holderStartedAt: fc.option(timeArb, { nil: null }), childPid: pidArb, childStartedAt: fc.option(timeArb, { nil: null }),
  childPgid: pidArb, killRequestedAt: fc.option(timeArb, { nil: null }), exitedAt: fc.option(timeArb, { nil: null }),
  exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }), exitSignal: fc.option(fc.constantFrom("SIGKILL", "SIGTERM"), { nil: null }),
  ended: fc.option(fc.constantFrom("exited", "crashed", "killed", "abandoned", "failed-to-start" as const), { nil: null }),
  startError: fc.option(textArb, { nil: null }), lastLines: fc.array(textArb, { maxLength: 3 }), log: textArb,
});


const uuidArb = fc.uuid();
const headArb = fc.option(fc.stringMatching(/^[0-9a-f]{40}$/), { nil: null });

/** An episode key, as `episode start --key` takes one. */
export const episodeKeyArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,30}$/);

/** An open episode as `episode start` writes it, busy or idle. */
export const episodeArb: fc.Arbitrary<Episode> = fc.record({
  schema: fc.constant(1 as const), id: uuidArb, key: episodeKeyArb, host: fc.string({ minLength: 1, maxLength: 12 }),
  client: fc.record({ pid: fc.integer({ min: 1, max: 4_194_304 }), started_at: fc.option(timeArb, { nil: null }), start_id: fc.option(fc.string({ maxLength: 20 }), { nil: null }) }),
  started_at: timeArb, branch: fc.option(fc.string({ maxLength: 20 }), { nil: null }), start_head: headArb,
  status: fc.constantFrom("busy" as const, "idle" as const), status_changed_at: timeArb,
});

/** A ledger event as `ledger append` and the episode verbs write one. */
export const ledgerEventArb: fc.Arbitrary<LedgerEvent> = fc.record({
  at: timeArb, episode: uuidArb, key: episodeKeyArb, kind: fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}(\.[a-z][a-z0-9_-]{0,8}){0,2}$/),
  data: fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => k !== "__proto__"), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
});

/** A closed episode's record as `episode end` or `recover episodes` writes it. */
export const episodeRecordArb: fc.Arbitrary<EpisodeRecord> = fc.record({
  schema: fc.constant(1 as const), id: uuidArb, key: episodeKeyArb, host: fc.string({ minLength: 1, maxLength: 12 }),
  branch: fc.option(fc.string({ maxLength: 20 }), { nil: null }), started_at: timeArb, ended_at: timeArb,
  outcome: fc.string({ minLength: 1, maxLength: 12 }), start_head: headArb, end_head: headArb,
  commits: fc.option(fc.array(fc.record({ sha: fc.stringMatching(/^[0-9a-f]{40}$/), subject: fc.string({ maxLength: 30 }) }), { maxLength: 3 }), { nil: null }),
  changed_files: fc.option(fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 3 }), { nil: null }),
  written_by: fc.constantFrom("episode end", "recover episodes"),
});
