/**
 * What the daemon reports as it happens: one event per thing, printed as one line for a
 * newcomer watching, or as one JSON object per line with `--json`.
 */
import { redactAll } from "./redact.ts";

/** One thing that happened in a tick; `line` is how it reads to a person. */
export interface DaemonEvent {
  /** What kind of thing: `poll`, `dispatched`, `comment`, `waiting`, `worker_ended`, `session_lost`, `step_failed`, `tick` (the summary), ... */
  event: string;
  line: string;
  [key: string]: unknown;
}

/** Where a daemon's events go. */
export type Report = (event: DaemonEvent) => void;

/** A report writing text lines, or JSON objects with `json`, to `write`; a secret in an event (an error, a step's output) is redacted first. */
export function reporter(write: (text: string) => void, json: boolean): Report {
  return (event) => {
    const shown = redactAll(event);
    write(json ? JSON.stringify(shown) + "\n" : shown.line + "\n");
  };
}
