/**
 * What robot-army says on an issue about its sessions. Identifiers only (DESIGN rule 4):
 * host, session name and id, branch, worktree, work item; never a reason, a path from an
 * error, a git message or a setting.
 */

/** Where a session runs, as a comment lists it. */
export interface SessionPlace {
  host: string;
  name: string;
  id: string;
  branch: string;
  worktree: string;
}

/** The comment on a confirmed dispatch: a one-line header, then the list. */
export function dispatchComment(place: SessionPlace): string {
  return ["robot-army dispatched a session for this issue.", "", ...placeLines(place)].join("\n");
}

/** The comment when this host takes an issue over from a host gone past the lease: which host it replaces (identifiers only). */
export function takeoverComment(host: string, replaces: string): string {
  return `robot-army on ${host} takes this issue over from ${replaces}, whose heartbeat stopped for longer than its lease; nothing of ${replaces}'s was pushed for it.`;
}

/** How a new session follows the one before it: `resume` restores its context, `restart` starts without it. */
export type Relaunch = "resume" | "restart";

/**
 * The comment when `resume` or `restart` gives the item a new session: the header with the
 * attempt, the same list as a dispatch, and the earlier session it continues or supersedes
 * (or that none is on record, as after a rebuilt database).
 */
export function relaunchComment(place: SessionPlace & { attempt: number; how: Relaunch; earlier: string | null }): string {
  const { attempt, how, earlier, ...where } = place;
  return [`robot-army reassigned this issue to a new session (attempt ${attempt}).`, "", ...placeLines(where), "", ...earlierLines(how, earlier)].join("\n");
}

function earlierLines(how: Relaunch, earlier: string | null): string[] {
  if (earlier === null) {
    return how === "resume"
      ? ["No earlier session is on record; the worker was started with its resume option in the same worktree."]
      : ["No earlier session is on record; the new session starts without any earlier context."];
  }
  return how === "resume"
    ? [`Continues: ${earlier}`, "That session's context was restored."]
    : [`Supersedes: ${earlier}`, "The new session starts without that session's context."];
}

/** The comment on a failure to start: the header, the host and the work item, and nothing else. */
export function failureComment(failure: { host: string; item: number }): string {
  return ["robot-army could not start a session for this issue.", "", `- Host: ${failure.host}`, `- Work item: ${failure.item}`].join("\n");
}

function placeLines(place: SessionPlace): string[] {
  return [
    `- Host: ${place.host}`,
    `- Session: ${place.name}`,
    `- Session id: ${place.id}`,
    `- Branch: ${place.branch}`,
    `- Worktree: ${place.worktree}`,
  ];
}
