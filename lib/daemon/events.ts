/**
 * What the daemon reports as it happens: one event per thing, printed as one line for a
 * newcomer watching, or as one JSON object per line with `--json`.
 */

/** One thing that happened in a tick; `line` is how it reads to a person. */
export interface DaemonEvent {
  /** What kind of thing: `poll`, `dispatched`, `comment`, `waiting`, `worker_ended`, `session_lost`, `step_failed`, `tick` (the summary), ... */
  event: string;
  line: string;
  [key: string]: unknown;
}

/** Where a daemon's events go. */
export type Report = (event: DaemonEvent) => void;

/** A report writing text lines, or JSON objects with `json`, to `write`. */
export function reporter(write: (text: string) => void, json: boolean): Report {
  return (event) => write(json ? JSON.stringify(event) + "\n" : event.line + "\n");
}
