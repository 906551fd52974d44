/**
 * The part of GitHub's GraphQL schema the forge answers, each type named and shaped as in
 * GitHub's own schema (graphql.test.ts holds every field here to GitHub's published schema):
 * a repository's issue; who wrote and who edited its body; and its timeline's label and
 * rename events, the only timeline items the forge keeps (asked with `itemTypes`). An
 * actor is a `User`, or an `Organization`, behind the `Actor` interface, as on GitHub.
 */
import type { RouteContext } from "./http.ts";
import { nodeId } from "./repo-shapes.ts";
import type { ForgeBodyEdit, ForgeIssue, ForgeIssueEvent, ForgeLabel, ForgeRepo } from "./state.ts";
import { canPush, findIssue, findLabel, findRepo, userByLogin } from "./state.ts";

/** A GraphQL error as GitHub words it. */
export interface GraphqlError {
  message: string;
  type?: string;
  path?: Array<string | number>;
  extensions?: Record<string, unknown>;
}

/** Raised while checking or resolving: the whole answer becomes `errors` (an unknown field, a bad argument). */
export class QueryError extends Error {
  error: GraphqlError;
  constructor(error: GraphqlError) {
    super(error.message);
    this.error = error;
  }
}

/** What resolvers share: the request, the query's variables, and the errors that leave a null in the data. */
export interface Resolving {
  ctx: RouteContext;
  variables: Record<string, unknown>;
  soft: GraphqlError[];
}

/** A field of a type: the arguments it takes, its resolver, and the type of what it gives (a scalar when there is none). */
export interface FieldDef {
  type?: () => TypeDef;
  list?: boolean;
  args?: readonly string[];
  resolve(parent: any, args: Record<string, unknown>, r: Resolving, path: Array<string | number>): unknown;
}

/** An object type; an interface or union also names its possible types and which one a value is. */
export interface TypeDef {
  name: string;
  fields: Record<string, FieldDef>;
  /** A union: only `__typename` and fragments may be selected on it directly. */
  union?: boolean;
  possible?: () => TypeDef[];
  typeOf?(value: any, r: Resolving): TypeDef;
}

// Who acted: a login, resolved to the user or organisation the forge knows by it (as it is spelt there).

const actorLogin: FieldDef = { resolve: (login: string, _args, r) => userByLogin(r.ctx.data, login)?.login ?? login };

const USER: TypeDef = { name: "User", fields: { login: actorLogin } };
const ORGANIZATION: TypeDef = { name: "Organization", fields: { login: actorLogin } };

const ACTOR: TypeDef = {
  name: "Actor",
  fields: { login: actorLogin },
  possible: () => [USER, ORGANIZATION],
  // A login the forge does not know (a deleted account) is shown as GitHub shows its ghost: a User.
  typeOf: (login: string, r) => (userByLogin(r.ctx.data, login)?.type === "Organization" ? ORGANIZATION : USER),
};

// Who edited an issue's body.

const EDIT: TypeDef = {
  name: "UserContentEdit",
  fields: {
    id: { resolve: (edit: ForgeBodyEdit) => nodeId("UCE", edit.id) },
    editedAt: { resolve: (edit: ForgeBodyEdit) => edit.edited_at },
    createdAt: { resolve: (edit: ForgeBodyEdit) => edit.edited_at },
    editor: { type: () => ACTOR, resolve: (edit: ForgeBodyEdit) => edit.editor },
  },
};

/** One page of a connection: every item, the page's, and whether there are more either side. */
interface Page<T> {
  all: T[];
  nodes: T[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

const PAGE_INFO: TypeDef = {
  name: "PageInfo",
  fields: {
    hasNextPage: { resolve: (page: Page<unknown>) => page.hasNextPage },
    hasPreviousPage: { resolve: (page: Page<unknown>) => page.hasPreviousPage },
  },
};

const EDITS: TypeDef = {
  name: "UserContentEditConnection",
  fields: {
    totalCount: { resolve: (page: Page<ForgeBodyEdit>) => page.all.length },
    pageInfo: { type: () => PAGE_INFO, resolve: (page: Page<ForgeBodyEdit>) => page },
    nodes: { type: () => EDIT, list: true, resolve: (page: Page<ForgeBodyEdit>) => page.nodes },
  },
};

// An issue's timeline: the label and rename events, each with the repository its label is looked up in.

interface TimelineNode {
  event: ForgeIssueEvent;
  repo: ForgeRepo | undefined;
}

/** A label as an event names it: the repository's label of that name, when it still has one. */
interface LabelNode {
  name: string;
  label: ForgeLabel | undefined;
}

const LABEL: TypeDef = {
  name: "Label",
  fields: {
    id: { resolve: (l: LabelNode) => nodeId("LA", l.label?.id ?? 0) },
    name: { resolve: (l: LabelNode) => l.label?.name ?? l.name },
    color: { resolve: (l: LabelNode) => l.label?.color ?? "ededed" },
    description: { resolve: (l: LabelNode) => l.label?.description ?? null },
    // Nullable on GitHub too; a label kept before the forge kept its times has none.
    createdAt: { resolve: (l: LabelNode) => l.label?.created_at ?? null },
    updatedAt: { resolve: (l: LabelNode) => l.label?.updated_at ?? null },
  },
};

const labelOf: FieldDef = {
  type: () => LABEL,
  resolve: (node: TimelineNode) => node.event.event === "renamed" ? null : { name: node.event.label, label: node.repo && findLabel(node.repo, node.event.label) },
};

const eventFields = (kind: string): Record<string, FieldDef> => ({
  id: { resolve: (node: TimelineNode) => nodeId(kind, node.event.id) },
  actor: { type: () => ACTOR, resolve: (node: TimelineNode) => node.event.actor },
  createdAt: { resolve: (node: TimelineNode) => node.event.created_at },
});

const LABELED_EVENT: TypeDef = { name: "LabeledEvent", fields: { ...eventFields("LE"), label: labelOf } };
const UNLABELED_EVENT: TypeDef = { name: "UnlabeledEvent", fields: { ...eventFields("UNLE"), label: labelOf } };
const RENAMED_TITLE_EVENT: TypeDef = {
  name: "RenamedTitleEvent",
  fields: {
    ...eventFields("RTE"),
    previousTitle: { resolve: (node: TimelineNode) => (node.event.event === "renamed" ? node.event.rename.from : null) },
    currentTitle: { resolve: (node: TimelineNode) => (node.event.event === "renamed" ? node.event.rename.to : null) },
  },
};

const TIMELINE_ITEM: TypeDef = {
  name: "IssueTimelineItems",
  fields: {},
  union: true,
  possible: () => [LABELED_EVENT, UNLABELED_EVENT, RENAMED_TITLE_EVENT],
  typeOf: (node: TimelineNode) => ({ labeled: LABELED_EVENT, unlabeled: UNLABELED_EVENT, renamed: RENAMED_TITLE_EVENT })[node.event.event],
};

const TIMELINE: TypeDef = {
  name: "IssueTimelineItemsConnection",
  fields: {
    totalCount: { resolve: (page: Page<TimelineNode>) => page.all.length },
    filteredCount: { resolve: (page: Page<TimelineNode>) => page.all.length },
    pageCount: { resolve: (page: Page<TimelineNode>) => page.nodes.length },
    pageInfo: { type: () => PAGE_INFO, resolve: (page: Page<TimelineNode>) => page },
    nodes: { type: () => TIMELINE_ITEM, list: true, resolve: (page: Page<TimelineNode>) => page.nodes },
  },
};

/** The timeline item types the forge keeps, by GitHub's name (`IssueTimelineItemsItemType`), and the event each is. */
const KEPT_ITEM_TYPES: Record<string, ForgeIssueEvent["event"]> = { LABELED_EVENT: "labeled", UNLABELED_EVENT: "unlabeled", RENAMED_TITLE_EVENT: "renamed" };

const ISSUE: TypeDef = {
  name: "Issue",
  fields: {
    id: { resolve: (issue: ForgeIssue) => nodeId("I", issue.id) },
    number: { resolve: (issue: ForgeIssue) => issue.number },
    title: { resolve: (issue: ForgeIssue) => issue.title },
    body: { resolve: (issue: ForgeIssue) => issue.body ?? "" },
    createdAt: { resolve: (issue: ForgeIssue) => issue.created_at },
    updatedAt: { resolve: (issue: ForgeIssue) => issue.updated_at },
    author: { type: () => ACTOR, resolve: (issue: ForgeIssue) => issue.user },
    editor: { type: () => ACTOR, resolve: (issue: ForgeIssue) => lastEdit(issue)?.editor ?? null },
    lastEditedAt: { resolve: (issue: ForgeIssue) => lastEdit(issue)?.edited_at ?? null },
    includesCreatedEdit: { resolve: (issue: ForgeIssue) => (issue.edits ?? []).length > 0 },
    userContentEdits: {
      type: () => EDITS,
      args: ["first", "last"],
      // Newest first, as GitHub lists them.
      resolve: (issue: ForgeIssue, args, _r, path) => page([...(issue.edits ?? [])].reverse(), args, path, "userContentEdits"),
    },
    timelineItems: {
      type: () => TIMELINE,
      args: ["itemTypes", "first", "last"],
      // Oldest first, as GitHub lists them.
      resolve(issue: ForgeIssue, args, r, path) {
        const kinds = keptKinds(args.itemTypes, path);
        const repo = r.ctx.data.repos.find((candidate) => candidate.issues.includes(issue));
        return page((issue.events ?? []).filter((event) => kinds.has(event.event)).map((event) => ({ event, repo })), args, path, "timelineItems");
      },
    },
  },
};

const REPOSITORY: TypeDef = {
  name: "Repository",
  fields: {
    id: { resolve: (repo: ForgeRepo) => nodeId("R", repo.id) },
    nameWithOwner: { resolve: (repo: ForgeRepo) => `${repo.owner}/${repo.name}` },
    issue: {
      type: () => ISSUE,
      args: ["number"],
      resolve(repo: ForgeRepo, args, r, path) {
        if (!Number.isSafeInteger(args.number)) throw new QueryError({ message: "Argument 'number' on Field 'issue' has an invalid value. Expected type 'Int!'.", path });
        // A pull request is not an Issue in GitHub's schema.
        const issue = findIssue(repo, args.number as number);
        if (issue && !issue.pull) return issue;
        r.soft.push({ type: "NOT_FOUND", path, message: `Could not resolve to an Issue with the number of ${args.number}.` });
        return null;
      },
    },
  },
};

/** The root of every query. */
export const QUERY: TypeDef = {
  name: "Query",
  fields: {
    repository: {
      type: () => REPOSITORY,
      args: ["owner", "name", "followRenames"],
      resolve(_parent, args, r, path) {
        const [owner, name] = [args.owner, args.name];
        if (typeof owner !== "string" || typeof name !== "string") throw new QueryError({ message: "Field 'repository' is missing required arguments: owner, name", path });
        const repo = findRepo(r.ctx.data, owner, name);
        if (repo && !(repo.private && !canPush(repo, r.ctx.user.login))) return repo;
        r.soft.push({ type: "NOT_FOUND", path, message: `Could not resolve to a Repository with the name '${owner}/${name}'.` });
        return null;
      },
    },
  },
};

/** Every type the forge answers, by name: what an inline fragment's condition may name. */
const TYPES = new Map([QUERY, REPOSITORY, ISSUE, ACTOR, USER, ORGANIZATION, EDITS, EDIT, PAGE_INFO, TIMELINE, TIMELINE_ITEM, LABELED_EVENT, UNLABELED_EVENT, RENAMED_TITLE_EVENT, LABEL].map((t) => [t.name, t]));

/** The type the forge answers by this name, if any. */
export function typeNamed(name: string): TypeDef | undefined {
  return TYPES.get(name);
}

/** Every type the forge answers (graphql.test.ts holds each to GitHub's schema). */
export function forgeTypes(): TypeDef[] {
  return [...TYPES.values()];
}

function lastEdit(issue: ForgeIssue): ForgeBodyEdit | undefined {
  const edits = issue.edits ?? [];
  // The first revision is the original; with only it there has been no edit.
  return edits.length > 1 ? edits.at(-1) : undefined;
}

/** The event kinds `itemTypes` asks for; the forge answers only those it keeps, never a timeline with items missing. */
function keptKinds(value: unknown, path: Array<string | number>): Set<ForgeIssueEvent["event"]> {
  // GraphQL takes one value where a list is expected as a list of it.
  const names = value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
  const kept = Object.keys(KEPT_ITEM_TYPES).join(", ");
  if (names.length === 0) {
    throw new QueryError({ message: `The sandbox forge keeps only an issue's label and rename events: timelineItems must be asked with itemTypes among ${kept}`, path });
  }
  for (const name of names) {
    if (typeof name !== "string" || !Object.hasOwn(KEPT_ITEM_TYPES, name)) {
      throw new QueryError({ message: `The sandbox forge does not keep timeline items of type ${JSON.stringify(name)}: it answers itemTypes among ${kept}`, path });
    }
  }
  return new Set(names.map((name: string) => KEPT_ITEM_TYPES[name]));
}

/** A page of a connection's items by `first` or `last`, which GitHub requires one of, at most 100. */
function page<T>(all: T[], args: Record<string, unknown>, path: Array<string | number>, connection: string): Page<T> {
  const first = pageSize(args.first, "first", path, connection);
  const last = pageSize(args.last, "last", path, connection);
  if (first === undefined && last === undefined) {
    throw new QueryError({ message: `You must provide a \`first\` or \`last\` value to properly paginate the \`${connection}\` connection.`, path, type: "MISSING_PAGINATION_BOUNDARIES" });
  }
  if (first !== undefined) return { all, nodes: all.slice(0, first), hasNextPage: all.length > first, hasPreviousPage: false };
  return { all, nodes: all.slice(Math.max(0, all.length - last!)), hasNextPage: false, hasPreviousPage: all.length > last! };
}

function pageSize(value: unknown, name: string, path: Array<string | number>, connection: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > 100) {
    throw new QueryError({ message: `Requesting ${value} records on the \`${connection}\` connection exceeds the \`${name}\` limit of 100 records.`, path, type: "EXCESSIVE_PAGINATION" });
  }
  return value as number;
}
