/**
 * What a work item's worker session is called: `ra-<repository name>-<issue>` for its
 * first attempt, `ra-<repository name>-<issue>-<n>` after that, what a terminal tab and a
 * resume picker show. Dispatch, `resume` and `restart` all name a session here.
 *
 * Launchers refuse a name already on record, and removing the old session's record would
 * destroy its exit record and output log, the evidence of how it ended, before anything has
 * read them. So a name on record is never taken back: the number moves on to the next free
 * one (after a reset, a failed launch or a rebuilt database the names on disk run ahead of
 * the attempts on record). The name is a handle, not a count; the attempt is the row's.
 */
import { listRecords } from "../sessions/records.ts";
import type { WorkItem } from "../work-items/queries.ts";

/** `ra-<repo>-<issue>` for attempt 1, else `ra-<repo>-<issue>-<attempt>`. */
export function sessionName(item: Pick<WorkItem, "repo" | "issue">, attempt = 1): string {
  const repoName = item.repo.split("/")[1].replace(/[^A-Za-z0-9._-]/g, "-");
  const base = `ra-${repoName}-${item.issue}`;
  return attempt === 1 ? base : `${base}-${attempt}`;
}

/** The name for the item's `attempt`, moved on past every name already on record in the session root. */
export function freeSessionName(sessionRoot: string, item: Pick<WorkItem, "repo" | "issue">, attempt: number): string {
  const taken = new Set(listRecords(sessionRoot).map((record) => record.name));
  for (let n = attempt; ; n++) {
    const name = sessionName(item, n);
    if (!taken.has(name)) return name;
  }
}
