/**
 * What the forge's route handlers are given and answer with, GitHub's error shapes, the
 * checks of request bodies, the order of GitHub's comment lists, and pagination with
 * GitHub's `Link` header.
 */
import type { ShapeContext } from "./repo-shapes.ts";
import type { ForgeData, ForgeRepo, ForgeUser } from "./state.ts";
import { canPush, findRepo } from "./state.ts";

/** A handler's answer: status, JSON body (none for 204) and extra headers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Everything a handler needs to answer one request. */
export interface RouteContext {
  /** The `{name}` parts of the route template, decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body, or undefined when there was none. */
  body: unknown;
  /** The request's own URL, absolute, for `Link` headers. */
  url: URL;
  user: ForgeUser;
  data: ForgeData;
  shapes: ShapeContext;
  /** The forge's folder (the bare repositories live under it). */
  dir: string;
  /** The forge's clock as an ISO time to the second. */
  now(): string;
}

/** One endpoint: method, template such as `/repos/{owner}/{repo}/issues`, and its handler. */
export interface Route {
  method: string;
  template: string;
  /** Whether it changes state (written to disk after it answers; run one at a time). */
  writes?: boolean;
  /**
   * A write that changes only the bare repository, each change a compare-and-swap in git
   * (`git update-ref <ref> <new> <old>`), which keeps concurrent writers apart as it keeps
   * pushes apart: it runs at once, beside the other writes rather than after them, and has
   * no state to save. It still counts as a write against the secondary rate limit.
   */
  gitOnly?: boolean;
  handler(ctx: RouteContext): Reply | Promise<Reply>;
}

const DOCS = "https://docs.github.com/rest";

/** An answer that is an error, thrown from a handler and sent as GitHub would. */
export class ForgeHttpError extends Error {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  constructor(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(String(body.message));
    this.name = "ForgeHttpError";
    this.status = status;
    this.body = { documentation_url: DOCS, status: String(status), ...body };
    this.headers = headers;
  }
}

/** 404 `{"message":"Not Found"}`. */
export function notFound(message = "Not Found"): ForgeHttpError {
  return new ForgeHttpError(404, { message });
}

/** 422 "Validation Failed" with one error, e.g. `{resource:"Issue", code:"missing_field", field:"title"}`. */
export function validationFailed(error: Record<string, string>): ForgeHttpError {
  return new ForgeHttpError(422, { message: "Validation Failed", errors: [error] });
}

/** The longest issue or comment body GitHub accepts, in characters. */
export const BODY_MAX_CHARACTERS = 65536;

/** 422 as GitHub answers a body over its limit: characters are counted as code points, as GitHub counts them. */
export function refuseTooLong(text: string | null | undefined, resource: string): void {
  if (typeof text !== "string" || text.length <= BODY_MAX_CHARACTERS) return;
  if ([...text].length <= BODY_MAX_CHARACTERS) return;
  throw validationFailed({ resource, code: "custom", field: "body", message: `body is too long (maximum is ${BODY_MAX_CHARACTERS} characters)` });
}

/** 422 "Invalid request." for a value of the wrong type, worded as GitHub's schema check words it. */
export function invalidRequest(field: string, value: unknown, expected: string): ForgeHttpError {
  return new ForgeHttpError(422, { message: `Invalid request.\n\nFor 'properties/${field}', ${JSON.stringify(value)} is not ${expected}.` });
}

/**
 * A string field the body must hold, refused as GitHub's schema check refuses a request
 * (the git database endpoints check their bodies this way, not with "Validation Failed").
 */
export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (value === undefined) throw new ForgeHttpError(422, { message: `Invalid request.\n\n"${field}" wasn't supplied.` });
  if (typeof value !== "string") throw invalidRequest(field, value, "a string");
  return value;
}

/** 403 for a write that needs push access to the repository. */
export function mustHavePush(): ForgeHttpError {
  return new ForgeHttpError(403, { message: "Must have push access to repository" });
}

/** The repository the route names; a private one is Not Found to those who cannot push, as on GitHub. */
export function repoOf(ctx: RouteContext): ForgeRepo {
  const repo = findRepo(ctx.data, ctx.params.owner, ctx.params.repo);
  if (!repo || (repo.private && !canPush(repo, ctx.user.login))) throw notFound();
  return repo;
}

/** The request body as an object; no body is an empty object. */
export function bodyObject(ctx: RouteContext): Record<string, unknown> {
  if (ctx.body === undefined) return {};
  if (typeof ctx.body !== "object" || ctx.body === null || Array.isArray(ctx.body)) {
    throw new ForgeHttpError(422, { message: `Invalid request.\n\n${JSON.stringify(ctx.body)} is not an object.` });
  }
  return ctx.body as Record<string, unknown>;
}

/** A string field: missing (when required) is `missing_field`, the wrong type is "Invalid request.". */
export function stringField(body: Record<string, unknown>, field: string, resource: string, required: true): string;
export function stringField(body: Record<string, unknown>, field: string, resource: string, required?: false): string | null | undefined;
export function stringField(body: Record<string, unknown>, field: string, resource: string, required = false): string | null | undefined {
  const value = body[field];
  if (value === undefined || (required && value === null)) {
    if (required) throw validationFailed({ resource, code: "missing_field", field });
    return undefined;
  }
  if (value === null) return null;
  if (typeof value !== "string") throw invalidRequest(field, value, "a string");
  if (required && value.trim() === "") throw validationFailed({ resource, code: "missing_field", field });
  return value;
}

/** A field that must be one of a few words. */
export function choiceField<T extends string>(body: Record<string, unknown>, field: string, resource: string, choices: readonly T[]): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !choices.includes(value as T)) throw validationFailed({ resource, code: "invalid", field, value: String(value) });
  return value as T;
}

/** A list of label names: strings, or objects with a `name`, as GitHub accepts. */
export function labelNames(value: unknown, field = "labels"): string[] {
  if (!Array.isArray(value)) throw invalidRequest(field, value, "an array");
  return value.map((item) => {
    const name = typeof item === "string" ? item : typeof item === "object" && item !== null ? (item as { name?: unknown }).name : undefined;
    if (typeof name !== "string" || name.trim() === "") throw validationFailed({ resource: "Label", code: "invalid", field: "name" });
    return name.trim();
  });
}

/** A query parameter that must be one of a few words (422 otherwise, as GitHub answers). */
export function queryChoice<T extends string>(ctx: RouteContext, name: string, choices: readonly T[], fallback: T): T {
  const value = ctx.query.get(name);
  if (value === null || value === "") return fallback;
  if (!choices.includes(value as T)) throw validationFailed({ resource: "Search", code: "invalid", field: name, value });
  return value as T;
}

/** A query parameter that must be an ISO time. */
export function querySince(ctx: RouteContext): number | undefined {
  const value = ctx.query.get("since");
  if (value === null || value === "") return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw validationFailed({ resource: "Search", code: "invalid", field: "since", value });
  return time;
}

/**
 * Comments as GitHub's comment lists give them: updated at or after `since`, in ascending
 * order of id unless `sort` (created or updated) is given; `direction` counts only beside
 * `sort`, as GitHub documents, and is then descending unless it says otherwise.
 */
export function commentOrder<T extends { id: number; created_at: string; updated_at: string }>(ctx: RouteContext, items: readonly T[]): T[] {
  const asked = ctx.query.get("sort");
  const sort = queryChoice(ctx, "sort", ["created", "updated"] as const, "created");
  const direction = queryChoice(ctx, "direction", ["asc", "desc"] as const, asked ? "desc" : "asc");
  const since = querySince(ctx);
  const key = (item: T) => (asked ? Date.parse(sort === "created" ? item.created_at : item.updated_at) : 0);
  const sign = asked && direction === "desc" ? -1 : 1;
  return items.filter((item) => since === undefined || Date.parse(item.updated_at) >= since).sort((a, b) => sign * (key(a) - key(b) || a.id - b.id));
}

/**
 * One page of a list and the `Link` header that points at its neighbours. A repository's
 * lists link to `/repositories/<id>/...`, as GitHub's do, so a client must follow the
 * links it is given rather than build the next page's URL itself.
 */
export function paginate<T>(ctx: RouteContext, items: T[]): { page: T[]; headers: Record<string, string> } {
  const perPage = clamp(Number(ctx.query.get("per_page") ?? 30) || 30, 1, 100);
  const page = Math.max(1, Math.floor(Number(ctx.query.get("page") ?? 1) || 1));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const links: string[] = [];
  const repo = ctx.params.owner !== undefined && ctx.params.repo !== undefined ? findRepo(ctx.data, ctx.params.owner, ctx.params.repo) : undefined;
  const path = repo ? ctx.url.pathname.replace(/^\/repos\/[^/]+\/[^/]+/, `/repositories/${repo.id}`) : ctx.url.pathname;
  const link = (n: number, rel: string) => {
    const url = new URL(ctx.url);
    url.pathname = path;
    url.searchParams.set("per_page", String(perPage));
    url.searchParams.set("page", String(n));
    links.push(`<${url.href}>; rel="${rel}"`);
  };
  if (page > 1) link(Math.min(page - 1, last), "prev");
  if (page < last) link(page + 1, "next");
  if (page < last) link(last, "last");
  if (page > 1) link(1, "first");
  return { page: slice, headers: links.length ? { link: links.join(", ") } : {} };
}

/** A number from a route's `{number}` part; anything else is Not Found. */
export function numberParam(ctx: RouteContext, name = "number"): number {
  const raw = ctx.params[name];
  if (!/^\d+$/.test(raw)) throw notFound();
  return Number(raw);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}
