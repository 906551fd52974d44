/**
 * The forge's GraphQL endpoint (`POST /graphql`), answering the part of GitHub's schema
 * robot-army reads: a repository's issue, who wrote and who edited its body
 * (`author`, `editor`, `lastEditedAt`, `userContentEdits`), in GitHub's JSON shape
 * `{data: {repository: {issue: {...}}}}`. A query it does not understand (a field it does
 * not know, a fragment, a mutation) gets GitHub's `errors` answer, never a guessed one.
 *
 * @example
 * POST /graphql {"query": "query($o:String!,$n:String!,$i:Int!){repository(owner:$o,name:$n){issue(number:$i){editor{login}}}}",
 *                "variables": {"o": "demo", "n": "widgets", "i": 1}}
 */
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError } from "./http.ts";
import { parseQuery } from "./_graphql-parse.ts";
import type { Field, Value } from "./_graphql-parse.ts";
import { nodeId } from "./repo-shapes.ts";
import type { ForgeBodyEdit, ForgeIssue, ForgeRepo } from "./state.ts";
import { canPush, findIssue, findRepo, userByLogin } from "./state.ts";

/** The GraphQL route. */
export const graphqlRoutes: Route[] = [{ method: "POST", template: "/graphql", handler: answerGraphql }];

/** A GraphQL error as GitHub words it. */
interface GraphqlError {
  message: string;
  type?: string;
  path?: Array<string | number>;
  extensions?: Record<string, unknown>;
}

/** Raised while resolving: the whole answer becomes `errors` (an unknown field, a bad argument). */
class QueryError extends Error {
  error: GraphqlError;
  constructor(error: GraphqlError) {
    super(error.message);
    this.error = error;
  }
}

function answerGraphql(ctx: RouteContext): Reply {
  const body = ctx.body as { query?: unknown; variables?: unknown } | undefined;
  if (typeof body?.query !== "string") {
    throw new ForgeHttpError(400, { message: "A query attribute must be specified and must be a string." });
  }
  const variables = (typeof body.variables === "object" && body.variables !== null ? body.variables : {}) as Record<string, unknown>;
  let fields: Field[];
  try {
    fields = parseQuery(body.query);
  } catch (error) {
    return { status: 200, body: { errors: [{ message: (error as Error).message }] } };
  }
  const soft: GraphqlError[] = [];
  try {
    const data = select(fields, QUERY, { ctx, variables, soft }, null, []);
    return { status: 200, body: soft.length ? { data, errors: soft } : { data } };
  } catch (error) {
    if (error instanceof QueryError) return { status: 200, body: { errors: [error.error] } };
    throw error;
  }
}

/** What resolvers share: the request, the query's variables, and the errors that leave a null in the data. */
interface Resolving {
  ctx: RouteContext;
  variables: Record<string, unknown>;
  soft: GraphqlError[];
}

/** A field of a type: its resolver, and the type of what it gives (a scalar when there is none). */
interface FieldDef {
  type?: TypeDef;
  list?: boolean;
  resolve(parent: any, args: Record<string, unknown>, r: Resolving, path: Array<string | number>): unknown;
}

interface TypeDef {
  name: string;
  fields: Record<string, FieldDef>;
}

function select(fields: Field[], type: TypeDef, r: Resolving, parent: unknown, path: Array<string | number>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const key = field.alias ?? field.name;
    if (field.name === "__typename") {
      out[key] = type.name;
      continue;
    }
    const def = Object.hasOwn(type.fields, field.name) ? type.fields[field.name] : undefined;
    if (!def) {
      throw new QueryError({
        message: `Field '${field.name}' doesn't exist on type '${type.name}'`,
        path: [...path, field.name],
        extensions: { code: "undefinedField", typeName: type.name, fieldName: field.name },
      });
    }
    if (def.type && !field.selections) {
      throw new QueryError({ message: `Field must have selections (field '${field.name}' returns ${def.type.name} but has no selections.)`, path: [...path, field.name] });
    }
    if (!def.type && field.selections) {
      throw new QueryError({ message: `Selections can't be made on scalars (field '${field.name}' returns a scalar)`, path: [...path, field.name] });
    }
    const args = Object.fromEntries(Object.entries(field.args).map(([name, value]) => [name, valueOf(value, r.variables)]));
    const value = def.resolve(parent, args, r, [...path, key]);
    if (!def.type || value === null || value === undefined) out[key] = value ?? null;
    else if (def.list) out[key] = (value as unknown[]).map((v, i) => select(field.selections!, def.type!, r, v, [...path, key, i]));
    else out[key] = select(field.selections!, def.type, r, value, [...path, key]);
  }
  return out;
}

function valueOf(value: Value, variables: Record<string, unknown>): unknown {
  if (value.kind === "variable") {
    if (!Object.hasOwn(variables, value.name)) throw new QueryError({ message: `Variable $${value.name} was used but given no value` });
    return variables[value.name];
  }
  return value.value;
}

const ACTOR: TypeDef = {
  name: "Actor",
  fields: {
    login: { resolve: (login: string, _args, r) => userByLogin(r.ctx.data, login)?.login ?? login },
  },
};

const EDIT: TypeDef = {
  name: "UserContentEdit",
  fields: {
    id: { resolve: (edit: ForgeBodyEdit) => nodeId("UCE", edit.id) },
    editedAt: { resolve: (edit: ForgeBodyEdit) => edit.edited_at },
    createdAt: { resolve: (edit: ForgeBodyEdit) => edit.edited_at },
    editor: { type: ACTOR, resolve: (edit: ForgeBodyEdit) => edit.editor },
  },
};

const EDITS: TypeDef = {
  name: "UserContentEditConnection",
  fields: {
    totalCount: { resolve: (page: { all: ForgeBodyEdit[] }) => page.all.length },
    nodes: { type: EDIT, list: true, resolve: (page: { nodes: ForgeBodyEdit[] }) => page.nodes },
  },
};

const ISSUE: TypeDef = {
  name: "Issue",
  fields: {
    id: { resolve: (issue: ForgeIssue) => nodeId("I", issue.id) },
    number: { resolve: (issue: ForgeIssue) => issue.number },
    title: { resolve: (issue: ForgeIssue) => issue.title },
    body: { resolve: (issue: ForgeIssue) => issue.body ?? "" },
    createdAt: { resolve: (issue: ForgeIssue) => issue.created_at },
    updatedAt: { resolve: (issue: ForgeIssue) => issue.updated_at },
    author: { type: ACTOR, resolve: (issue: ForgeIssue) => issue.user },
    editor: { type: ACTOR, resolve: (issue: ForgeIssue) => lastEdit(issue)?.editor ?? null },
    lastEditedAt: { resolve: (issue: ForgeIssue) => lastEdit(issue)?.edited_at ?? null },
    includesCreatedEdit: { resolve: (issue: ForgeIssue) => (issue.edits ?? []).length > 0 },
    userContentEdits: {
      type: EDITS,
      resolve(issue: ForgeIssue, args, _r, path) {
        // Newest first, as GitHub lists them; `first` and `last` are required, at most 100.
        const all = [...(issue.edits ?? [])].reverse();
        const first = pageSize(args.first, "first", path);
        const last = pageSize(args.last, "last", path);
        if (first === undefined && last === undefined) {
          throw new QueryError({ message: "You must provide a `first` or `last` value to properly paginate the `userContentEdits` connection.", path, type: "MISSING_PAGINATION_BOUNDARIES" });
        }
        const nodes = first !== undefined ? all.slice(0, first) : all.slice(Math.max(0, all.length - last!));
        return { all, nodes };
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
      type: ISSUE,
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

const QUERY: TypeDef = {
  name: "Query",
  fields: {
    repository: {
      type: REPOSITORY,
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

function lastEdit(issue: ForgeIssue): ForgeBodyEdit | undefined {
  const edits = issue.edits ?? [];
  // The first revision is the original; with only it there has been no edit.
  return edits.length > 1 ? edits.at(-1) : undefined;
}

function pageSize(value: unknown, name: string, path: Array<string | number>): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > 100) {
    throw new QueryError({ message: `Requesting ${value} records on the \`userContentEdits\` connection exceeds the \`${name}\` limit of 100 records.`, path, type: "EXCESSIVE_PAGINATION" });
  }
  return value as number;
}
