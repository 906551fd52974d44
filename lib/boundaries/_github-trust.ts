/**
 * Whose words issues hold, as GitHub's GraphQL API tells it: who opened each issue, its
 * title and body, every revision's editor, and who added each label and changed the title,
 * for many issues of one repository in one query (each under its own alias), or for one
 * issue's body alone (`bodyAuthorship`).
 *
 * The answer for many issues vouches only for what it holds whole. An issue is left out,
 * for its caller to ask alone by the REST events and the one-issue query, whenever that
 * answer might differ from theirs: GitHub gave an error naming it (never read as "no
 * editors"), or an error naming nothing, or no issue; its label and rename events run past
 * one page; an actor of those events is not a User with a login (REST spells a bot
 * `name[bot]`, GraphQL `name`; a deleted account may be null in one and "ghost" in the
 * other); or a label was changed after it was added (REST names an event's label as it was
 * then, GraphQL as it is now, so a label renamed since would read differently).
 */
import { TRUST_BATCH } from "./github-types.ts";
import type { BodyAuthorship, IssueEvent, IssueTrustAnswer } from "./github-types.ts";

/** The revisions one answer lists: GitHub's largest page. */
const EDITS_PER_ANSWER = 100;

/** What is asked of an issue's body, the same for one issue and many, so both read it alike. */
const AUTHORSHIP_FIELDS = `author { login }
      title
      body
      editor { login }
      lastEditedAt
      userContentEdits(first: ${EDITS_PER_ANSWER}) { totalCount nodes { editor { login } editedAt } }`;

/** The label and rename events asked of each issue of many: one page, oldest first, as the REST events list them. */
const EVENT_FIELDS = `timelineItems(itemTypes: [LABELED_EVENT, RENAMED_TITLE_EVENT], first: 100) {
        pageInfo { hasNextPage }
        nodes {
          __typename
          ... on LabeledEvent { actor { __typename login } createdAt label { name updatedAt } }
          ... on RenamedTitleEvent { actor { __typename login } createdAt previousTitle currentTitle }
        }
      }`;

/** The GraphQL query `bodyAuthorship` sends. */
export const BODY_AUTHORSHIP_QUERY = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      ${AUTHORSHIP_FIELDS}
    }
  }
}`;

/** The GraphQL query that asks about `numbers` (at most TRUST_BATCH issues of one repository, `$owner/$name`), each under the alias `i<number>`. */
export function issuesTrustQuery(numbers: readonly number[]): string {
  if (numbers.length === 0 || numbers.length > TRUST_BATCH) throw new RangeError(`One query asks about 1 to ${TRUST_BATCH} issues, not ${numbers.length}`);
  const issues = numbers.map((number) => {
    if (!Number.isSafeInteger(number) || number < 1) throw new RangeError(`An issue number is a positive integer, not ${JSON.stringify(number)}`);
    return `    i${number}: issue(number: ${number}) {\n      ${AUTHORSHIP_FIELDS}\n      ${EVENT_FIELDS}\n    }`;
  });
  return `query($owner: String!, $name: String!) {\n  repository(owner: $owner, name: $name) {\n${issues.join("\n")}\n  }\n}`;
}

/** An issue's body as the GraphQL answer gives it. */
export type RawAuthorship = {
  author: { login: string } | null; title: string; body: string; editor: { login: string } | null; lastEditedAt: string | null;
  userContentEdits: { totalCount: number; nodes: Array<{ editor: { login: string } | null; editedAt: string }> };
};

/** Who wrote an issue's body and each revision's editor, read the same from the one-issue query and from the many. */
export function authorshipOf(issue: RawAuthorship): BodyAuthorship {
  const edits = issue.userContentEdits;
  // A deleted account shows as GitHub's "ghost"; it is someone, and not the author.
  const editors = edits.nodes.map((node) => node.editor?.login ?? "ghost");
  if (issue.editor && !editors.length) editors.push(issue.editor.login);
  return {
    author: issue.author?.login ?? "ghost",
    title: issue.title ?? "",
    body: issue.body ?? "",
    editors,
    lastEditedAt: issue.lastEditedAt,
    complete: edits.totalCount <= edits.nodes.length,
  };
}

type GraphqlAnswer = { data?: { repository?: Record<string, unknown> | null } | null; errors?: Array<{ path?: unknown }> };

/**
 * What the answer to `issuesTrustQuery(numbers)` vouches for, by issue number: each issue
 * whose answer is whole and reads as the REST events and the one-issue query would (see
 * the module's note); the others are missing, to be asked alone.
 */
export function trustAnswers(answer: unknown, numbers: readonly number[]): Map<number, IssueTrustAnswer> {
  const found = new Map<number, IssueTrustAnswer>();
  const { data, errors = [] } = (answer ?? {}) as GraphqlAnswer;
  const doubted = new Set<string>();
  for (const error of Array.isArray(errors) ? errors : [{}]) {
    const path = Array.isArray(error?.path) ? error.path : [];
    // An error that names no one issue casts its doubt on them all.
    if (path[0] !== "repository" || typeof path[1] !== "string") return found;
    doubted.add(path[1]);
  }
  const repository = data?.repository;
  if (typeof repository !== "object" || repository === null) return found;
  for (const number of numbers) {
    const alias = `i${number}`;
    if (doubted.has(alias) || !Object.hasOwn(repository, alias)) continue;
    const read = issueTrustOf(repository[alias]);
    if (read) found.set(number, read);
  }
  return found;
}

type RawActor = { __typename?: unknown; login?: unknown } | null | undefined;
type RawEventNode = {
  __typename?: unknown; actor?: RawActor; createdAt?: unknown;
  label?: { name?: unknown; updatedAt?: unknown } | null; previousTitle?: unknown; currentTitle?: unknown;
} | null;

/** One issue's answer, or undefined when it does not read exactly as the per-issue reads would. */
function issueTrustOf(raw: unknown): IssueTrustAnswer | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const issue = raw as RawAuthorship & { timelineItems?: { pageInfo?: { hasNextPage?: unknown }; nodes?: unknown } | null };
  const timeline = issue.timelineItems;
  if (!timeline || timeline.pageInfo?.hasNextPage !== false || !Array.isArray(timeline.nodes)) return undefined;
  const events: IssueEvent[] = [];
  for (const node of timeline.nodes as RawEventNode[]) {
    const event = eventOf(node);
    if (!event) return undefined;
    events.push(event);
  }
  const edits = issue.userContentEdits;
  if (typeof edits !== "object" || edits === null || !Array.isArray(edits.nodes) || typeof edits.totalCount !== "number") return undefined;
  return { events, authorship: authorshipOf(issue) };
}

function eventOf(node: RawEventNode): IssueEvent | undefined {
  const actor = userLogin(node?.actor);
  const at = node?.createdAt;
  if (!node || actor === undefined || typeof at !== "string" || Number.isNaN(Date.parse(at))) return undefined;
  if (node.__typename === "LabeledEvent") {
    const { name, updatedAt } = node.label ?? {};
    // A label changed since it was added may have had another name then: REST would name that one.
    if (typeof name !== "string" || typeof updatedAt !== "string" || !(Date.parse(updatedAt) <= Date.parse(at))) return undefined;
    return { event: "labeled", label: name, actor, at };
  }
  if (node.__typename === "RenamedTitleEvent" && typeof node.previousTitle === "string" && typeof node.currentTitle === "string") {
    return { event: "renamed", from: node.previousTitle, to: node.currentTitle, actor, at };
  }
  return undefined;
}

/** A User's login; undefined for any other actor, or none, whose login REST may spell otherwise. */
function userLogin(actor: RawActor): string | undefined {
  return actor?.__typename === "User" && typeof actor.login === "string" && actor.login !== "" ? actor.login : undefined;
}
