/**
 * What is true in the world of one effect right after the crash cut it, read by the suite
 * itself where the effect lands (the forge's comments, the worktree's folder and git's list,
 * the managed session's files and the process table by pid plus start time, the spool file's
 * paths), never by the sweep's own readers: the suite checks the sweep's conclusion against
 * it, so a sweep that concludes what is not so fails its case.
 */
import { trusts } from "../dispatch/agent-trust.ts";
import { spawnSync } from "node:child_process";
import { sha256Hex } from "../sha256.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { commentMarker } from "../effects.ts";
import { listRecords, readRecord, sessionFiles } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { DAMAGED_DIR } from "../sessions/spool.ts";
import { commandRuns, sessionState } from "../sessions/state.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { EffectKindName } from "../store/effect-kinds.ts";
import { git } from "../testing/fixtures.ts";
import type { Lab } from "./lab.ts";

/** What the world says of one effect, in a word a crash case states. */
export type WorldFact =
  | "posted" | "not posted"
  | "present" | "absent"
  | "running" | "stopped" | "no record"
  | "files kept" | "files removed"
  | "marked" | "not marked"
  | "at its path" | "set aside"
  | "open" | "closed"
  | "listed" | "pruned"
  | "bundle written" | "no bundle"
  | "branch present" | "branch absent"
  | "received" | "not received"
  | "archived" | "not archived"
  | "trusted" | "untrusted"
  | "claimed" | "not claimed" | "released"
  | "advanced" | "not advanced";

/** Reads what is true of the effect `intent` started, or undefined for a kind whose effect the suite cannot see (an episode's journal). */
export async function worldOf(lab: Lab, kind: EffectKindName, intent: AuditRecord): Promise<WorldFact | undefined> {
  const body = intent.body;
  switch (kind) {
    case "github.comment":
      return await commentOnForge(lab, Number(body.issue), intent.actionId!);
    case "worktree.create":
    case "worktree.remove":
      return worktreeOnDisk(lab, String(body.path));
    case "worktree.prune":
      return worktreeRecords(lab, body.paths as string[]);
    case "session.launch":
    case "session.kill":
    case "session.cancel":
    case "session.stop":
    case "session.retire":
    case "session.respawn":
    case "session.start":
      return sessionProcesses(lab, intent);
    case "session.remove":
    case "session.remove-orphan":
      return existsSync(sessionFiles(lab.sessionRoot, intent.sessionId!).record) ? "files kept" : "files removed";
    case "session.abandon":
      return readRecord(lab.sessionRoot, intent.sessionId!)?.ended === "abandoned" ? "marked" : "not marked";
    case "session.mark-flapping":
      return readRecord(lab.sessionRoot, intent.sessionId!)?.tags.flapping === "true" ? "marked" : "not marked";
    case "spool.damaged":
      return spoolFile(String(body.path));
    case "episode.recovered":
      return undefined;
    case "tab.close":
      return tabOnServer(lab, intent);
    case "session.send":
    case "feedback.delivered":
      return await typedInto(lab, intent);
    case "bundle.write":
    case "bundle.remove":
      return existsSync(String(body.file)) ? "bundle written" : "no bundle";
    case "branch.delete":
      return git(lab.clone, "branch", "--list", String(body.branch)).trim() === "" ? "branch absent" : "branch present";
    case "notification.send":
      return receivedBy(lab, String(body.channel), String(body.title));
    case "records.archive":
      return recordsArchived(String(body.path), body.records as Array<{ file: string; sha256: string; archive: string }>);
    case "claim.create":
      return await claimOnForge(lab, String(body.ref), (claim) => claim.message.includes(`\naction: ${intent.actionId}\n`) ? "claimed" : "not claimed");
    case "host.heartbeat":
      return await claimOnForge(lab, String(body.ref), (claim) => claim.message.includes(`\naction: ${intent.actionId}\n`) ? "advanced" : "not advanced");
    case "claim.release":
      return await claimOnForge(lab, String(body.ref), (claim) => claim.sha === body.sha ? "claimed" : "released");
    case "agent.trust":
      return trusts({ agent: body.agent === "codex" ? "codex" : "claude", file: String(body.file) }, String(body.folder)).trusted === true ? "trusted" : "untrusted";
  }
}

/**
 * Whether the lab's loopback receiver (the `notifying` setup's) got the message the intent
 * names, by its title; more than once is never a world recovery may leave.
 */
function receivedBy(lab: Lab, channel: string, title: string): WorldFact {
  const file = join(lab.dir, "receivers", "received", `${channel}.jsonl`);
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  const got = lines.map((line) => JSON.parse(line) as { body?: { title?: unknown } }).filter((r) => r.body?.title === title).length;
  if (got > 1) throw new Error(`the ${channel} received "${title}" ${got} times`);
  return got === 1 ? "received" : "not received";
}

/** Whether the issue has a comment carrying the action's marker. */
async function commentOnForge(lab: Lab, issue: number, actionId: string): Promise<WorldFact> {
  const comments = (await lab.api("GET", `/repos/demo/widgets/issues/${issue}/comments`)) as Array<{ body: string }>;
  return comments.some((comment) => comment.body.includes(commentMarker(actionId))) ? "posted" : "not posted";
}

/** What the issue's claim reference says on the forge, as `judge` reads it (no reference reads as no sha and no message). */
async function claimOnForge(lab: Lab, ref: string, judge: (claim: { sha: string; message: string }) => WorldFact): Promise<WorldFact> {
  const name = ref.replace(/^refs\//, "");
  const refs = (await lab.api("GET", `/repos/demo/widgets/git/matching-refs/${name}`)) as Array<{ ref: string; object: { sha: string } }>;
  const found = refs.find((r) => r.ref === ref);
  if (!found) return judge({ sha: "", message: "" });
  const commit = (await lab.api("GET", `/repos/demo/widgets/git/commits/${found.object.sha}`)) as { message: string };
  return judge({ sha: found.object.sha, message: commit.message });
}

/** A worktree is present when its folder exists and git lists it; absent when neither. */
function worktreeOnDisk(lab: Lab, path: string): WorldFact {
  const listed = git(lab.clone, "worktree", "list", "--porcelain").split("\n").includes(`worktree ${path}`);
  const folder = existsSync(path);
  if (listed !== folder) throw new Error(`the worktree "${path}" is half there: ${folder ? "its folder exists, git does not list it" : "git lists it, its folder is gone"}`);
  return folder ? "present" : "absent";
}

/** Whether git's list of the clone's worktrees still holds any of the paths a prune named. */
function worktreeRecords(lab: Lab, paths: string[]): WorldFact {
  const listed = git(lab.clone, "worktree", "list", "--porcelain").split("\n");
  return paths.some((path) => listed.includes(`worktree ${path}`)) ? "listed" : "pruned";
}

/**
 * Whether any process of the session the intent names runs, by the process table: its
 * holder, or a process its command started. A record never given a holder runs nothing.
 */
function sessionProcesses(lab: Lab, intent: AuditRecord): WorldFact {
  const records = sessionsNamed(lab, intent);
  if (records.length === 0) return "no record";
  const runs = (record: SessionRecord) => sessionState(lab.sessionRoot, record) === "running" || commandRuns(record) === true;
  return records.some(runs) ? "running" : "stopped";
}

/** The records an intent is about: by its session id, else every record with the name it gives. */
function sessionsNamed(lab: Lab, intent: AuditRecord): SessionRecord[] {
  const name = intent.body.session ?? intent.body.name;
  const byId = intent.sessionId ? readRecord(lab.sessionRoot, intent.sessionId) : undefined;
  const byName = listRecords(lab.sessionRoot).filter((record) => record.name === name);
  return byId ? [byId, ...byName.filter((record) => record.id !== byId.id)] : byName;
}

/** Whether the tmux window the intent names is still there with its item's marker, asked of the server by its socket path. */
function tabOnServer(lab: Lab, intent: AuditRecord): WorldFact {
  const terminal = intent.body.terminal as { socket_path?: unknown } | undefined;
  if (typeof terminal?.socket_path !== "string") throw new Error("the tab.close intent names no tmux socket path");
  const listed = spawnSync("tmux", ["-S", terminal.socket_path, "list-windows", "-a", "-F", "#{window_id} #{@ra_item}"], { encoding: "utf8", env: { ...lab.env, TMUX: "" } });
  if (listed.status !== 0) {
    if (/no server running|error connecting/.test(listed.stderr)) return "closed";
    throw new Error(`tmux cannot list the lab's windows: ${listed.stderr.trim()}`);
  }
  return listed.stdout.split("\n").includes(`${intent.body.tab} ${intent.item}`) ? "open" : "closed";
}

/**
 * Whether the `tmux-worker` setup's worker got a line: it writes what it reads to `typed.txt` in
 * its worktree. A send's outcome is written once Enter is pressed, so a line on its way is
 * waited for a moment before "not received" is concluded.
 */
async function typedInto(lab: Lab, intent: AuditRecord): Promise<WorldFact> {
  const file = join(lab.stateDir, "worktrees", "demo", "widgets", `issue-${intent.item}`, "typed.txt");
  const deadline = Date.now() + 2000;
  while (!existsSync(file) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
  return existsSync(file) ? "received" : "not received";
}

/**
 * Whether every record an archive names is whole in the archive (its copy's bytes hash as
 * the intent says), or none is and each is still whole in the worktree; a record in neither,
 * or an archive half done, is a world no crash may leave.
 */
function recordsArchived(worktree: string, records: Array<{ file: string; sha256: string; archive: string }>): WorldFact {
  const whole = (file: string, sha256: string) => existsSync(file) && sha256Hex(readFileSync(file)) === sha256;
  const archived = records.filter((r) => whole(r.archive, r.sha256)).length;
  const lost = records.filter((r) => !whole(r.archive, r.sha256) && !whole(join(worktree, r.file), r.sha256));
  if (lost.length) throw new Error(`the records ${lost.map((r) => r.file).join(", ")} are neither whole in the archive nor in "${worktree}"`);
  if (archived === records.length) return "archived";
  if (archived === 0) return "not archived";
  throw new Error(`${archived} of ${records.length} records are archived: the archive was cut half done`);
}

function spoolFile(path: string): WorldFact {
  if (existsSync(path)) return "at its path";
  const damaged = join(dirname(path), DAMAGED_DIR);
  const name = basename(path);
  // A second file of one name is set aside with a suffix.
  if (existsSync(damaged) && readdirSync(damaged).some((file) => file === name || file.startsWith(`${name}.`))) return "set aside";
  throw new Error(`the spool file "${path}" is neither at its path nor set aside`);
}
