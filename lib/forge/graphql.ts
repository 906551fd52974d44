/**
 * The forge's GraphQL endpoint (`POST /graphql`), answering the part of GitHub's schema
 * robot-army reads (_graphql-schema.ts): a repository's issues, each asked by number and
 * under an alias as often as wanted in one query, who wrote and who edited each body
 * (`author`, `editor`, `lastEditedAt`, `userContentEdits`), and the label and rename events
 * of each one's timeline (`timelineItems`), in GitHub's JSON shape
 * `{data: {repository: {i1: {...}, i2: {...}}}}`. The query is checked whole before anything
 * is resolved, as GitHub checks it: a query it does not understand (a field or argument it
 * does not know, a fragment on a type that cannot be there, a named fragment, a mutation)
 * gets GitHub's `errors` answer with no `data`, never a guessed one. An issue or repository
 * that is not there is null in `data` with a NOT_FOUND error whose path names it (the
 * alias it was asked under), so the rest of the answer stands.
 *
 * @example
 * POST /graphql {"query": "query($o:String!,$n:String!){repository(owner:$o,name:$n){i1: issue(number:1){editor{login}} i2: issue(number:2){editor{login}}}}",
 *                "variables": {"o": "demo", "n": "widgets"}}
 */
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError } from "./http.ts";
import { parseQuery } from "./_graphql-parse.ts";
import type { Field, Selection, Value } from "./_graphql-parse.ts";
import { QUERY, QueryError, typeNamed } from "./_graphql-schema.ts";
import type { GraphqlError, Resolving, TypeDef } from "./_graphql-schema.ts";

/** The GraphQL route. */
export const graphqlRoutes: Route[] = [{ method: "POST", template: "/graphql", handler: answerGraphql }];

function answerGraphql(ctx: RouteContext): Reply {
  const body = ctx.body as { query?: unknown; variables?: unknown } | undefined;
  if (typeof body?.query !== "string") {
    throw new ForgeHttpError(400, { message: "A query attribute must be specified and must be a string." });
  }
  const variables = (typeof body.variables === "object" && body.variables !== null ? body.variables : {}) as Record<string, unknown>;
  let selections: Selection[];
  try {
    selections = parseQuery(body.query);
  } catch (error) {
    return { status: 200, body: { errors: [{ message: (error as Error).message }] } };
  }
  const soft: GraphqlError[] = [];
  try {
    check(selections, QUERY, []);
    const data = select(selections, QUERY, { ctx, variables, soft }, null, []);
    return { status: 200, body: soft.length ? { data, errors: soft } : { data } };
  } catch (error) {
    if (error instanceof QueryError) return { status: 200, body: { errors: [error.error] } };
    throw error;
  }
}

/**
 * Checks a selection set against `type` before anything is resolved, as GitHub validates a
 * query whole: so a field it does not know is refused even where the data would be null.
 */
function check(selections: Selection[], type: TypeDef, path: Array<string | number>): void {
  for (const selection of selections) {
    if (selection.kind === "fragment") {
      const on = typeNamed(selection.on);
      if (!on) throw new QueryError({ message: `No such type ${selection.on}, so it can't be a fragment condition`, path, extensions: { code: "undefinedType", typeName: selection.on } });
      if (!overlaps(on, type)) {
        throw new QueryError({ message: `Fragment on ${on.name} can't be spread inside ${type.name}`, path, extensions: { code: "fragmentSpreadTypeMismatch", typeName: on.name, fragmentName: "unknown", parentName: type.name } });
      }
      check(selection.selections, on, path);
      continue;
    }
    const at = [...path, selection.alias ?? selection.name];
    if (selection.name === "__typename") {
      if (selection.selections) throw new QueryError({ message: "Selections can't be made on scalars (field '__typename' returns String but has selections [])", path: at });
      continue;
    }
    if (type.union) {
      throw new QueryError({ message: `Selections can't be made directly on unions (see selections on ${type.name})`, path: at, extensions: { code: "selectionMismatch", nodeName: type.name } });
    }
    const def = Object.hasOwn(type.fields, selection.name) ? type.fields[selection.name] : undefined;
    if (!def) {
      throw new QueryError({
        message: `Field '${selection.name}' doesn't exist on type '${type.name}'`,
        path: at,
        extensions: { code: "undefinedField", typeName: type.name, fieldName: selection.name },
      });
    }
    for (const arg of Object.keys(selection.args)) {
      if (!(def.args ?? []).includes(arg)) {
        throw new QueryError({ message: `Field '${selection.name}' doesn't accept argument '${arg}'`, path: at, extensions: { code: "argumentNotAccepted", name: selection.name, typeName: "Field", argumentName: arg } });
      }
    }
    const fieldType = def.type?.();
    if (fieldType && !selection.selections) {
      throw new QueryError({ message: `Field must have selections (field '${selection.name}' returns ${fieldType.name} but has no selections.)`, path: at });
    }
    if (!fieldType && selection.selections) {
      throw new QueryError({ message: `Selections can't be made on scalars (field '${selection.name}' returns a scalar)`, path: at });
    }
    if (fieldType) check(selection.selections!, fieldType, at);
  }
}

/** Whether a value of type `a` may also be of type `b` (a fragment on `a` can be spread inside `b`). */
function overlaps(a: TypeDef, b: TypeDef): boolean {
  const concrete = (t: TypeDef) => t.possible?.() ?? [t];
  const names = new Set(concrete(a).map((t) => t.name));
  return concrete(b).some((t) => names.has(t.name));
}

/** Resolves a checked selection set on `value`, of `type` (its concrete type first, for an interface or union). */
function select(selections: Selection[], declared: TypeDef, r: Resolving, value: unknown, path: Array<string | number>): Record<string, unknown> {
  const type = declared.typeOf?.(value, r) ?? declared;
  const out: Record<string, unknown> = {};
  for (const selection of selections) {
    if (selection.kind === "fragment") {
      const on = typeNamed(selection.on)!;
      if (on.name === type.name || (on.possible?.() ?? []).some((t) => t.name === type.name)) merge(out, select(selection.selections, type, r, value, path));
      continue;
    }
    merge(out, { [selection.alias ?? selection.name]: resolveField(selection, type, r, value, path) });
  }
  return out;
}

function resolveField(field: Field, type: TypeDef, r: Resolving, parent: unknown, path: Array<string | number>): unknown {
  const key = field.alias ?? field.name;
  if (field.name === "__typename") return type.name;
  const def = type.fields[field.name];
  const args = Object.fromEntries(Object.entries(field.args).map(([name, value]) => [name, valueOf(value, r.variables)]));
  const value = def.resolve(parent, args, r, [...path, key]);
  const fieldType = def.type?.();
  if (!fieldType || value === null || value === undefined) return value ?? null;
  if (def.list) return (value as unknown[]).map((v, i) => select(field.selections!, fieldType, r, v, [...path, key, i]));
  return select(field.selections!, fieldType, r, value, [...path, key]);
}

/** Merges what a fragment selected into what the fields around it selected, as GraphQL merges one response key asked twice. */
function merge(into: Record<string, unknown>, from: Record<string, unknown>): void {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  for (const [key, value] of Object.entries(from)) {
    const had = into[key];
    if (isObject(had) && isObject(value)) merge(had, value);
    else if (Array.isArray(had) && Array.isArray(value) && had.length === value.length) had.forEach((item, i) => isObject(item) && isObject(value[i]) ? merge(item, value[i]) : undefined);
    else into[key] = value;
  }
}

function valueOf(value: Value, variables: Record<string, unknown>): unknown {
  if (value.kind === "variable") {
    if (!Object.hasOwn(variables, value.name)) throw new QueryError({ message: `Variable $${value.name} was used but given no value` });
    return variables[value.name];
  }
  if (value.kind === "enum") return value.name;
  if (value.kind === "list") return value.values.map((v) => valueOf(v, variables));
  return value.value;
}
