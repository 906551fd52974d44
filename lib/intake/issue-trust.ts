/**
 * Whose words an issue holds: only the owner's reach a worker. Three facts are read from
 * GitHub, live: who last added the label and who changed the title (the issue's
 * `labeled` and `renamed` events), and who edited the body (GraphQL: GitHub's REST issue
 * names no editor); for the many issues of a poll, all three in one GraphQL request per
 * TRUST_BATCH issues. An issue labelled by anyone but the owner is not taken; an item whose
 * title or body someone else changed is held for the owner until they approve its words
 * (title and body, one hash over both) as they read (`robot-army approve <id> --sha256`),
 * and a later change holds it again. Intake asks when it takes an issue (and again for a
 * held item whose issue changed), the gate before every start, and `reset` when it puts an
 * item back; what was last seen is kept in the store, so `status`, `show` and `prompt` say
 * why an item waits and what lets it go.
 */
import { sha256Hex } from "../sha256.ts";
import { TRUST_BATCH } from "../boundaries/github-types.ts";
import type { BodyAuthorship, GitHubReader, IssueEvent } from "../boundaries/github-types.ts";
import { nowIso } from "../clock.ts";
import { printable } from "../printable.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { StoreError } from "../store/store-file.ts";
import type { WorkItem } from "../work-items/queries.ts";

/** Whose label and words are trusted (`github.author`, `github.label`). */
export interface TrustRules {
  author: string;
  label: string;
}

/** An issue's words: what a worker is given (the title also names its branch), and what an approval covers. */
export interface IssueWords {
  title: string;
  body: string;
}

/** What GitHub says of an issue's words, as read at one moment. */
export interface TrustFacts extends IssueWords {
  /** Who last added the label; null when no event shows it added. */
  labelledBy: string | null;
  /** Who other than the owner edited the body (a note in place of logins GitHub did not list). */
  editedBy: string[];
  /** Who other than the owner changed the title. */
  renamedBy: string[];
}

/** Why an issue's words are not the owner's alone: its label, or its title (`renamed_by`) or body (`by`) changed by others. */
export type IssueDoubt =
  | { kind: "labelled"; by: string | null }
  | { kind: "edited"; by: string[]; renamed_by: string[] };

/** What stands in for editors GitHub did not list in one answer (more revisions than it gives at once). */
export const UNLISTED_EDITORS = "editors GitHub did not list";

/** How many hex digits of a words hash `prompt` and `show` print, and the fewest `approve --sha256` takes. */
export const SHORT_HASH = 12;

/** Reads who labelled, renamed and edited an issue, and its words: two requests (its events, one GraphQL query). */
export async function readTrustFacts(reader: Pick<GitHubReader, "issueEvents" | "bodyAuthorship">, repo: string, issue: number, rules: TrustRules): Promise<TrustFacts> {
  const events = await reader.issueEvents(repo, issue);
  return factsOf(events, await reader.bodyAuthorship(repo, issue), rules);
}

/**
 * Reads what `readTrustFacts` reads of many issues of one repository together: one GraphQL
 * request for each TRUST_BATCH of them, where each alone costs two. An issue that answer
 * does not vouch for (see `GitHubReader.issuesTrust`), or one of a request that failed, is
 * missing from the map: `readTrustFacts` asks it alone, and its failure, if any, is its own.
 */
export async function readManyTrustFacts(reader: Pick<GitHubReader, "issuesTrust">, repo: string, issues: readonly number[], rules: TrustRules): Promise<Map<number, TrustFacts>> {
  const known = new Map<number, TrustFacts>();
  for (let start = 0; start < issues.length; start += TRUST_BATCH) {
    let answers;
    try {
      answers = await reader.issuesTrust(repo, issues.slice(start, start + TRUST_BATCH));
    } catch (error) {
      // The store's failure is never GitHub's; GitHub's is told by each issue asked alone.
      if (error instanceof StoreError) throw error;
      continue;
    }
    for (const [issue, answer] of answers) known.set(issue, factsOf(answer.events, answer.authorship, rules));
  }
  return known;
}

/** What GitHub's events and body authorship of an issue say of whose words it holds. */
function factsOf(events: readonly IssueEvent[], authorship: BodyAuthorship, rules: TrustRules): TrustFacts {
  return { labelledBy: lastLabeller(events, rules.label), renamedBy: renamers(events, rules), ...bodyFacts(authorship, rules) };
}

/** Who added `label` last (compared without case), or null when no event shows it added. */
export function lastLabeller(events: readonly IssueEvent[], label: string): string | null {
  const wanted = label.toLowerCase();
  const added = events.filter((e) => e.event === "labeled" && e.label.toLowerCase() === wanted);
  return added.at(-1)?.actor ?? null;
}

/** Who other than the owner ever changed the title, each named once, oldest first. */
export function renamers(events: readonly IssueEvent[], rules: TrustRules): string[] {
  return [...new Set(events.filter((e) => e.event === "renamed" && !isOwner(e.actor, rules)).map((e) => e.actor))];
}

/** Whether a login is the owner's (compared without case, as GitHub treats logins). */
export function isOwner(login: string | null, rules: TrustRules): boolean {
  return login !== null && login.toLowerCase() === rules.author.toLowerCase();
}

/** The title and body, and who other than the owner edited the body, each named once, newest first. */
export function bodyFacts(authorship: BodyAuthorship, rules: TrustRules): Pick<TrustFacts, "editedBy" | "title" | "body"> {
  const others = [...new Set(authorship.editors.filter((login) => !isOwner(login, rules)))];
  if (!authorship.complete) others.push(UNLISTED_EDITORS);
  return { editedBy: others, title: authorship.title, body: authorship.body };
}

/**
 * The hash an approval is kept by: one sha256 over the title and the body exactly (as a
 * JSON pair, so no split of the same characters between them hashes alike).
 */
export function wordsHash(words: IssueWords): string {
  return sha256Hex(JSON.stringify([words.title, words.body]));
}

/** Whether `given` (at least SHORT_HASH hex digits, any case) is the start of the hash `sha256`. */
export function hashMatches(given: string, sha256: string): boolean {
  return given.length >= SHORT_HASH && sha256.startsWith(given.toLowerCase());
}

/**
 * Why the words an item would start on are not the owner's, or undefined when they are:
 * the label added by someone else; or a title or body someone else changed, unless the
 * owner approved exactly the words the worker gets (`words`), and GitHub still shows them.
 */
export function doubtOf(facts: TrustFacts, rules: TrustRules, approvedSha256: string | null, words: IssueWords): IssueDoubt | undefined {
  return judge(facts.labelledBy, facts.editedBy, facts.renamedBy, wordsHash(facts), approvedSha256, words, rules);
}

/** The doubt in a sentence with what lifts it, its logins escaped for a terminal. */
export function describeDoubt(item: number, doubt: IssueDoubt, rules: TrustRules): string {
  if (doubt.kind === "labelled") {
    const who = doubt.by === null ? "someone GitHub does not name" : printable(doubt.by);
    return `its ${printable(rules.label)} label was added by ${who}, not by ${printable(rules.author)}; only a label you add yourself starts work (take it off and put it back: the next poll asks GitHub again)`;
  }
  const names = (logins: readonly string[]) => logins.map((login) => printable(login)).join(", ");
  const title = doubt.renamed_by.length ? `its title was changed by ${names(doubt.renamed_by)}` : "";
  const body = doubt.by.length ? `${title ? "its body edited" : "its body was edited"} by ${names(doubt.by)}` : "";
  return `${[title, body].filter(Boolean).join(" and ")}; "robot-army approve ${item}" after reading it`;
}

/** The command that approves an item's words as robot-army holds them, named by their short hash. */
export function approveCommand(item: number, words: IssueWords): string {
  return `robot-army approve ${item} --sha256 ${wordsHash(words).slice(0, SHORT_HASH)}`;
}

/** What the store keeps of an item's trust. */
export interface TrustRecord {
  item: number;
  labelled_by: string | null;
  /** Who other than the owner edited the body. */
  edited_by: string[];
  /** Who other than the owner changed the title. */
  renamed_by: string[];
  /** The hash of the title and body GitHub showed then (`wordsHash`). */
  body_sha256: string;
  checked_at: string;
  /** The hash of the title and body the owner approved. */
  approved_sha256: string | null;
  approved_at: string | null;
}

/** What was last seen of an item's trust, or undefined when it was never asked. */
export function trustRecord(store: Store, item: number): TrustRecord | undefined {
  const row = store.statement(`SELECT ${COLUMNS} FROM issue_trust WHERE item = ?`).get(item) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  // The column keeps who changed the words: {"body": [...], "title": [...]}; a bare list
  // (written before titles were asked) names the body's editors alone.
  const changed = JSON.parse(row.edited_by as string) as string[] | { body: string[]; title: string[] };
  const [body, title] = Array.isArray(changed) ? [changed, []] : [changed.body, changed.title];
  return { ...row, edited_by: body, renamed_by: title } as TrustRecord;
}

/**
 * Keeps what GitHub said of an item's words and returns the doubt it gives, if any. A
 * doubt newly seen (or a different one) is audited as the fact `trust.held`; one that
 * went (the owner relabelled, or approved) as `trust.cleared`.
 */
export function recordTrust(store: Store, item: Pick<WorkItem, "id" | "repo" | "title" | "body" | "simulated">, facts: TrustFacts, rules: TrustRules): IssueDoubt | undefined {
  return store.transaction(() => {
    const before = trustRecord(store, item.id);
    const doubt = doubtOf(facts, rules, before?.approved_sha256 ?? null, item);
    const had = before ? judgeRecord(before, item, rules) : undefined;
    store.statement(
      `INSERT INTO issue_trust (item, labelled_by, edited_by, body_sha256, checked_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (item) DO UPDATE SET labelled_by = excluded.labelled_by, edited_by = excluded.edited_by,
         body_sha256 = excluded.body_sha256, checked_at = excluded.checked_at`,
    ).run(item.id, facts.labelledBy, JSON.stringify({ body: facts.editedBy, title: facts.renamedBy }), wordsHash(facts), nowIso());
    const audit = (kind: string, body: Record<string, unknown>) => appendAudit(store, { kind, repo: item.repo, item: item.id, simulated: item.simulated, body });
    if (doubt && JSON.stringify(doubt) !== JSON.stringify(had)) {
      audit("trust.held", { doubt: doubt.kind, by: doubt.by, ...(doubt.kind === "edited" ? { renamed_by: doubt.renamed_by } : {}), reason: describeDoubt(item.id, doubt, rules) });
    } else if (!doubt && had) audit("trust.cleared", { was: had.kind, by: had.by });
    return doubt;
  });
}

/**
 * The doubt the store holds for an item (what `status` and the queue show without asking
 * GitHub), or undefined when none was seen; the gate asks GitHub again before any start.
 */
export function storedDoubt(store: Store, item: Pick<WorkItem, "id" | "title" | "body">, rules: TrustRules): IssueDoubt | undefined {
  const r = trustRecord(store, item.id);
  return r ? judgeRecord(r, item, rules) : undefined;
}

/** The logins other than the owner who changed an item's title or edited its body, as last seen (empty when none); null when GitHub was never asked. */
export function editorsOf(store: Store, item: number): string[] | null {
  const r = trustRecord(store, item);
  return r ? [...new Set([...r.renamed_by, ...r.edited_by])] : null;
}

/**
 * Records the owner's approval of `words` (the title and body robot-army holds, which
 * GitHub was just seen to show), audited as the fact `trust.body_approved` with its hash.
 */
export function approveWords(store: Store, item: Pick<WorkItem, "id" | "repo" | "simulated">, words: IssueWords, changedBy: Pick<TrustFacts, "editedBy" | "renamedBy">): string {
  const sha256 = wordsHash(words);
  store.transaction(() => {
    const at = nowIso();
    store.statement("UPDATE issue_trust SET approved_sha256 = ?, approved_at = ? WHERE item = ?").run(sha256, at, item.id);
    appendAudit(store, { kind: "trust.body_approved", repo: item.repo, item: item.id, simulated: item.simulated, at, body: { sha256, edited_by: changedBy.editedBy, renamed_by: changedBy.renamedBy } });
  });
  return sha256;
}

/**
 * What `show`, `status` and `prompt` say of an item's trust: why it is held (null when
 * not), who else changed its words, when the owner approved them, the hash of the words
 * robot-army holds, and the command that approves them when an approval would lift the hold.
 */
export interface TrustSummary {
  held: string | null;
  edited_by: string[];
  renamed_by: string[];
  approved_at: string | null;
  checked_at: string;
  sha256: string;
  approve: string | null;
}

/** An item's trust as last seen, for the read commands; null when it was never asked. */
export function trustSummary(store: Store, item: Pick<WorkItem, "id" | "title" | "body">, rules: TrustRules | undefined): TrustSummary | null {
  const record = trustRecord(store, item.id);
  if (!record) return null;
  const doubt = rules && storedDoubt(store, item, rules);
  return {
    held: doubt ? describeDoubt(item.id, doubt, rules) : null,
    edited_by: record.edited_by,
    renamed_by: record.renamed_by,
    approved_at: record.approved_at,
    checked_at: record.checked_at,
    sha256: wordsHash(item),
    approve: doubt?.kind === "edited" ? approveCommand(item.id, item) : null,
  };
}

/** Whose words an item's title and body are, for its prompt: who else changed them (null when never asked), why it is held, and what approves them. */
export function promptWords(store: Store, item: Pick<WorkItem, "id" | "title" | "body">, rules: TrustRules | undefined): { editedBy: string[] | null; held: string | null; approve: string | null } {
  const summary = trustSummary(store, item, rules);
  return { editedBy: editorsOf(store, item.id), held: summary?.held ?? null, approve: summary?.approve ?? null };
}

/** Whose label and words `config` trusts, or undefined when `github.author` is unset. */
export function trustRulesOf(github: { author?: string; label: string }): TrustRules | undefined {
  return github.author ? { author: github.author, label: github.label } : undefined;
}

const COLUMNS = "item, labelled_by, edited_by, body_sha256, checked_at, approved_sha256, approved_at";

function judgeRecord(r: TrustRecord, words: IssueWords, rules: TrustRules): IssueDoubt | undefined {
  return judge(r.labelled_by, r.edited_by, r.renamed_by, r.body_sha256, r.approved_sha256, words, rules);
}

/**
 * The one rule: the label must be the owner's; words others changed pass only when the
 * owner approved exactly the words GitHub shows (`liveSha256`) and the worker would get (`words`).
 */
function judge(labelledBy: string | null, editedBy: string[], renamedBy: string[], liveSha256: string, approvedSha256: string | null, words: IssueWords, rules: TrustRules): IssueDoubt | undefined {
  if (!isOwner(labelledBy, rules)) return { kind: "labelled", by: labelledBy };
  if (editedBy.length === 0 && renamedBy.length === 0) return undefined;
  const approved = approvedSha256 !== null && approvedSha256 === liveSha256 && approvedSha256 === wordsHash(words);
  return approved ? undefined : { kind: "edited", by: editedBy, renamed_by: renamedBy };
}
