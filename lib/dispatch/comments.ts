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
