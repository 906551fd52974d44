/**
 * Output normalisation: what varies between two runs of one scenario (temp paths, ids,
 * SHAs, the host, elapsed times, pids, a form's CSRF token) becomes a placeholder, so a scenario's recorded
 * output is byte-identical run after run and expectations can name `<repo>` or `<id-1>`.
 */
import { realpathSync } from "node:fs";
import { hostname } from "node:os";

/** A folder whose path is replaced by a placeholder such as `<repo>`. */
export interface Place {
  path: string;
  placeholder: string;
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
// A process's start counted from boot, `<boot id>:<start ticks>`: the machine's, not an id of ours.
const START_ID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+\b/gi;
const SHA = /\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b/g;
// A commit's short form where git or robot-army names one ("committed 5b8c0f8", "head 5b8c0f8"): a commit holding
// something new every run (an episode record's id) has a new one every run.
const SHORT_SHA = /\b(committed|head) ([0-9a-f]{7})\b/g;
// A check's failure on a head, as feedback names it: `failed on 5b8c0f8 of pull request #6`.
const SHORT_SHA_OF_PULL = /\b(on) ([0-9a-f]{7})(?= of pull request)/g;
// Only elapsed run times: `12ms`, `0.4ms` and decimal seconds `1.52s`. Ages such as `12h`,
// `30m` or `5s` come from the fixed clock and stay as they are.
const ELAPSED = /(?<![\w.])(?:\d+(?:\.\d+)?ms|\d+\.\d+s)\b/g;
// Times read from the real clock (a process's start time), told apart from the scenario's
// fixed clock by being near the real time now.
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})/g;
const REAL_TIME_WINDOW_MS = 2 * 86_400_000;
const PID = /\b((?:\w+_)?pid)(\s+|=|:\s*|"\s*:\s*)\d+\b/gi;
// The versions of the tools a machine has (doctor prints them): `git version 2.39.5`, `tmux 3.3a`.
const TOOL_VERSION = /\b(git version|tmux|node|deno) v?\d+(?:\.\d+)+[a-z]?\b/g;
// Sizes on disk, which depend on the file system's blocks: `12.4 KiB`, and JSON's "size_bytes": 12698.
const SIZE = /\b\d+(?:\.\d)? (?:KiB|MiB|GiB|TiB)\b/g;
const BYTES = /("\w*_bytes"\s*:\s*)\d+\b/g;
// How long a session's command ran, measured by its holder on the real clock: "ranSeconds": 0.1.
const RAN_SECONDS = /("ranSeconds"\s*:\s*)\d+(?:\.\d+)?\b/g;
// JSON fields such as "holderPid": 123 and "childPgid": 123.
const CAMEL_PID = /\b([a-z]\w*(?:Pid|Pgid))("\s*:\s*)\d+\b/g;
// The first 8 hex digits of an id, as `session ls` shows it: numbered with the full id it
// starts, whichever is seen first. Eight decimal digits are taken for an id only once its
// full form was seen, or once the runner has said an id on record starts with them.
const SHORT_ID = /(?<![\w-])[0-9a-f]{8}(?![\w-])/g;
// A dashboard form's CSRF token, keyed by a secret that is new with every serve (`serve --render` prints the forms).
const CSRF = /(name="csrf" value=")[A-Za-z0-9_-]+"/g;

/**
 * Normalises every output of one scenario; ids and SHAs are numbered by first appearance
 * across the whole scenario, so feed it the outputs in the order they happened.
 * @example
 * const n = new Normaliser([{ path: "/tmp/ra-1/repo", placeholder: "<repo>" }]);
 * n.normalise("/tmp/ra-1/repo/.ai 3f2c...") // "<repo>/.ai <id-1>"
 */
export class Normaliser {
  #places: RegExp | undefined;
  #placeholders = new Map<string, string>();
  #host: RegExp | undefined;
  #ids = new Map<string, string>();
  #shas = new Map<string, string>();
  #commits = new Map<string, string>();
  /** Short forms of ids known to exist (see `knowIds`), numbered only when they appear. */
  #known = new Set<string>();
  /** Numbers handed out by a `record: false` call, taken back when it ends. */
  #pending: Array<[Map<string, string>, string]> = [];

  #realNow: number;

  /** `realNow` is the real clock (not `RA_NOW`): times within two days of it become `<real-time>`. */
  constructor(places: Place[], host: string = hostname(), realNow: number = Date.now()) {
    this.#realNow = realNow;
    for (const { path, placeholder } of places) {
      for (const spelling of [path, realPath(path)]) {
        // The longest path that is still unclaimed wins: `<repo>` inside `<tmp>`, not `<tmp>/repo`.
        if (spelling.length > 1 && !this.#placeholders.has(spelling)) this.#placeholders.set(spelling, placeholder);
      }
    }
    const paths = [...this.#placeholders.keys()].sort((a, b) => b.length - a.length);
    // A path ends where a name cannot go on: `<dir>/repo.git` is not `<repo>.git`.
    if (paths.length) this.#places = new RegExp(`(?:${paths.map(escape).join("|")})(?![\\w-]|\\.\\w)`, "g");
    if (host) this.#host = new RegExp(`(?<![\\w.-])${escape(host)}(?![\\w-]|\\.\\w)`, "g");
  }

  /**
   * Says these ids exist (the runner reads them from the session root), so their short
   * forms are numbered even when all eight digits are decimal; numbers still go by first appearance.
   */
  knowIds(ids: Iterable<string>): void {
    for (const id of ids) this.#known.add(id.toLowerCase().slice(0, 8));
  }

  /**
   * Normalises one text. With `record: false` (for file contents an expectation reads),
   * ids and SHAs not seen yet get the numbers they would get, without claiming them.
   */
  normalise(text: string, options: { record?: boolean } = {}): string {
    const record = options.record ?? true;
    let out = this.#places ? text.replace(this.#places, (path) => this.#placeholders.get(path)!) : text;
    out = out.replace(START_ID, "<start-id>");
    out = out.replace(CSRF, '$1<csrf>"');
    out = out.replace(UUID, (id) => this.#number(this.#ids, id.toLowerCase().slice(0, 8), "id", record));
    out = out.replace(SHORT_ID, (id) => (/[a-f]/.test(id) || this.#ids.has(id) || this.#known.has(id) ? this.#number(this.#ids, id, "id", record) : id));
    out = out.replace(SHA, (sha) => this.#number(this.#shas, sha, "sha", record));
    for (const short of [SHORT_SHA, SHORT_SHA_OF_PULL]) out = out.replace(short, (_, said: string, sha: string) => `${said} ${this.#number(this.#commits, sha, "commit", record)}`);
    if (!record) this.#forget();
    if (this.#host) out = out.replace(this.#host, "<host>");
    out = out.replace(ISO_TIME, (time) => (Math.abs(Date.parse(time) - this.#realNow) < REAL_TIME_WINDOW_MS ? "<real-time>" : time));
    out = out.replace(ELAPSED, "<duration>").replace(RAN_SECONDS, "$1<duration>");
    out = out.replace(TOOL_VERSION, "$1 <version>");
    out = out.replace(SIZE, "<size>").replace(BYTES, "$1<bytes>");
    return out.replace(PID, "$1$2<pid>").replace(CAMEL_PID, "$1$2<pid>");
  }

  #number(seen: Map<string, string>, value: string, kind: string, record: boolean): string {
    let placeholder = seen.get(value);
    if (placeholder === undefined) {
      placeholder = `<${kind}-${seen.size + 1}>`;
      seen.set(value, placeholder);
      if (!record) this.#pending.push([seen, value]);
    }
    return placeholder;
  }

  #forget(): void {
    for (const [seen, value] of this.#pending) seen.delete(value);
    this.#pending = [];
  }
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
