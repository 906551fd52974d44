/**
 * Whose words an issue holds: only the owner's reach a worker. Two facts are read from
 * GitHub, live: who last added the label (the issue's `labeled` events), and who edited
 * the body (GraphQL: GitHub's REST issue names no editor). An issue labelled by anyone but
 * the owner is not taken; an item whose body someone else edited is held for the owner
 * until they approve the body as it reads (`robot-army approve`), and a later edit holds
 * it again. Intake asks when it takes an issue, the gate before every start, and `reset`
 * when it puts an item back; what was last seen is kept in the store, so `status`, `show`
 * and `prompt` say why an item waits and what lets it go.
 */
import { createHash } from "node:crypto";
import type { BodyAuthorship, GitHubReader, LabelEvent } from "../boundaries/github-types.ts";
import { nowIso } from "../clock.ts";
import { printable } from "../printable.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import type { WorkItem } from "../work-items/queries.ts";

/** Whose label and words are trusted (`github.author`, `github.label`). */
export interface TrustRules {
  author: string;
  label: string;
}

/** What GitHub says of an issue's words, as read at one moment. */
export interface TrustFacts {
  /** Who last added the label; null when no event shows it added. */
  labelledBy: string | null;
  /** Who other than the owner edited the body (a note in place of logins GitHub did not list). */
  editedBy: string[];
  /** The body as it reads now. */
  body: string;
}

/** Why an issue's words are not the owner's alone. */
export type IssueDoubt =
  | { kind: "labelled"; by: string | null }
  | { kind: "edited"; by: string[] };

/** What stands in for editors GitHub did not list in one answer (more revisions than it gives at once). */
export const UNLISTED_EDITORS = "editors GitHub did not list";

/** Reads who labelled and who edited an issue: two requests (its events, one GraphQL query). */
export async function readTrustFacts(reader: Pick<GitHubReader, "labelEvents" | "bodyAuthorship">, repo: string, issue: number, rules: TrustRules): Promise<TrustFacts> {
  const labelledBy = lastLabeller(await reader.labelEvents(repo, issue), rules.label);
  return { labelledBy, ...bodyFacts(await reader.bodyAuthorship(repo, issue), rules) };
}

/** Who added `label` last (compared without case), or null when no event shows it added. */
export function lastLabeller(events: readonly LabelEvent[], label: string): string | null {
  const wanted = label.toLowerCase();
  const added = events.filter((e) => e.event === "labeled" && e.label.toLowerCase() === wanted);
  return added.at(-1)?.actor ?? null;
}

/** Whether a login is the owner's (compared without case, as GitHub treats logins). */
export function isOwner(login: string | null, rules: TrustRules): boolean {
  return login !== null && login.toLowerCase() === rules.author.toLowerCase();
}

/** The body and who other than the owner edited it, each named once, newest first. */
export function bodyFacts(authorship: BodyAuthorship, rules: TrustRules): Pick<TrustFacts, "editedBy" | "body"> {
  const others = [...new Set(authorship.editors.filter((login) => !isOwner(login, rules)))];
  if (!authorship.complete) others.push(UNLISTED_EDITORS);
  return { editedBy: others, body: authorship.body };
}

/** The hash an approval is kept by: of the body's text exactly. */
export function bodyHash(body: string): string {
  return createHash("sha256").update(body, "utf8").digest("hex");
}

/**
 * Why the words an item would start on are not the owner's, or undefined when they are:
 * the label added by someone else; or a body someone else edited, unless the owner
 * approved exactly the text the worker gets (`body`), and GitHub still shows that text.
 */
export function doubtOf(facts: TrustFacts, rules: TrustRules, approvedSha256: string | null, body: string): IssueDoubt | undefined {
  return judge(facts.labelledBy, facts.editedBy, bodyHash(facts.body), approvedSha256, body, rules);
}

/** The doubt in a sentence with what lifts it, its logins escaped for a terminal. */
export function describeDoubt(item: number, doubt: IssueDoubt, rules: TrustRules): string {
  if (doubt.kind === "labelled") {
    const who = doubt.by === null ? "someone GitHub does not name" : printable(doubt.by);
    return `its ${printable(rules.label)} label was added by ${who}, not by ${printable(rules.author)}; only a label you add yourself starts work (take it off and put it back)`;
  }
  return `its body was edited by ${doubt.by.map((login) => printable(login)).join(", ")}; "robot-army approve ${item}" after reading it`;
}

/** What the store keeps of an item's trust. */
export interface TrustRecord {
  item: number;
  labelled_by: string | null;
  edited_by: string[];
  body_sha256: string;
  checked_at: string;
  approved_sha256: string | null;
  approved_at: string | null;
}

/** What was last seen of an item's trust, or undefined when it was never asked. */
export function trustRecord(store: Store, item: number): TrustRecord | undefined {
  const row = store.statement(`SELECT ${COLUMNS} FROM issue_trust WHERE item = ?`).get(item) as Record<string, unknown> | undefined;
  return row ? { ...row, edited_by: JSON.parse(row.edited_by as string) } as TrustRecord : undefined;
}

/**
 * Keeps what GitHub said of an item's words and returns the doubt it gives, if any. A
 * doubt newly seen (or a different one) is audited as the fact `trust.held`; one that
 * went (the owner relabelled, or approved) as `trust.cleared`.
 */
export function recordTrust(store: Store, item: Pick<WorkItem, "id" | "repo" | "body" | "simulated">, facts: TrustFacts, rules: TrustRules): IssueDoubt | undefined {
  return store.transaction(() => {
    const before = trustRecord(store, item.id);
    const doubt = doubtOf(facts, rules, before?.approved_sha256 ?? null, item.body);
    const had = before ? judge(before.labelled_by, before.edited_by, before.body_sha256, before.approved_sha256, item.body, rules) : undefined;
    store.statement(
      `INSERT INTO issue_trust (item, labelled_by, edited_by, body_sha256, checked_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (item) DO UPDATE SET labelled_by = excluded.labelled_by, edited_by = excluded.edited_by,
         body_sha256 = excluded.body_sha256, checked_at = excluded.checked_at`,
    ).run(item.id, facts.labelledBy, JSON.stringify(facts.editedBy), bodyHash(facts.body), nowIso());
    const audit = (kind: string, body: Record<string, unknown>) => appendAudit(store, { kind, repo: item.repo, item: item.id, simulated: item.simulated, body });
    if (doubt && JSON.stringify(doubt) !== JSON.stringify(had)) {
      audit("trust.held", { doubt: doubt.kind, by: doubt.by, reason: describeDoubt(item.id, doubt, rules) });
    } else if (!doubt && had) audit("trust.cleared", { was: had.kind, by: had.by });
    return doubt;
  });
}

/**
 * The doubt the store holds for an item (what `status` and the queue show without asking
 * GitHub), or undefined when none was seen; the gate asks GitHub again before any start.
 */
export function storedDoubt(store: Store, item: Pick<WorkItem, "id" | "body">, rules: TrustRules): IssueDoubt | undefined {
  const r = trustRecord(store, item.id);
  return r ? judge(r.labelled_by, r.edited_by, r.body_sha256, r.approved_sha256, item.body, rules) : undefined;
}

/** The logins other than the owner who edited an item's body, as last seen (empty when none); null when GitHub was never asked. */
export function editorsOf(store: Store, item: number): string[] | null {
  return trustRecord(store, item)?.edited_by ?? null;
}

/**
 * Records the owner's approval of `body` (the text robot-army holds, which GitHub was just
 * seen to show), audited as the fact `trust.body_approved` with its hash.
 */
export function approveBody(store: Store, item: Pick<WorkItem, "id" | "repo" | "simulated">, body: string, editedBy: readonly string[]): string {
  const sha256 = bodyHash(body);
  store.transaction(() => {
    const at = nowIso();
    store.statement("UPDATE issue_trust SET approved_sha256 = ?, approved_at = ? WHERE item = ?").run(sha256, at, item.id);
    appendAudit(store, { kind: "trust.body_approved", repo: item.repo, item: item.id, simulated: item.simulated, at, body: { sha256, edited_by: editedBy } });
  });
  return sha256;
}

/** What `show`, `status` and `prompt` say of an item's trust: why it is held (null when not), who else edited it, and when the owner approved it. */
export interface TrustSummary {
  held: string | null;
  edited_by: string[];
  approved_at: string | null;
  checked_at: string;
}

/** An item's trust as last seen, for the read commands; null when it was never asked. */
export function trustSummary(store: Store, item: Pick<WorkItem, "id" | "body">, rules: TrustRules | undefined): TrustSummary | null {
  const record = trustRecord(store, item.id);
  if (!record) return null;
  const doubt = rules && storedDoubt(store, item, rules);
  return { held: doubt ? describeDoubt(item.id, doubt, rules) : null, edited_by: record.edited_by, approved_at: record.approved_at, checked_at: record.checked_at };
}

/** Whose words an item's body is, for its prompt: who else edited it (null when never asked), and why it is held, if it is. */
export function promptWords(store: Store, item: Pick<WorkItem, "id" | "body">, rules: TrustRules | undefined): { editedBy: string[] | null; held: string | null } {
  const summary = trustSummary(store, item, rules);
  return { editedBy: summary?.edited_by ?? null, held: summary?.held ?? null };
}

/** Whose label and words `config` trusts, or undefined when `github.author` is unset. */
export function trustRulesOf(github: { author?: string; label: string }): TrustRules | undefined {
  return github.author ? { author: github.author, label: github.label } : undefined;
}

const COLUMNS = "item, labelled_by, edited_by, body_sha256, checked_at, approved_sha256, approved_at";

/**
 * The one rule: the label must be the owner's; a body others edited passes only when the
 * owner approved exactly the text GitHub shows (`liveSha256`) and the worker would get (`body`).
 */
function judge(labelledBy: string | null, editedBy: string[], liveSha256: string, approvedSha256: string | null, body: string, rules: TrustRules): IssueDoubt | undefined {
  if (!isOwner(labelledBy, rules)) return { kind: "labelled", by: labelledBy };
  if (editedBy.length === 0) return undefined;
  const approved = approvedSha256 !== null && approvedSha256 === liveSha256 && approvedSha256 === bodyHash(body);
  return approved ? undefined : { kind: "edited", by: editedBy };
}
