/**
 * The sandbox forge's HTTP server: GitHub's REST API (the part robot-army uses) and the
 * few GraphQL fields it reads (graphql.ts) on loopback, with token authentication, a primary rate limit stated on every
 * answer (errors too), ETags per viewer and 304 answers, GitHub's API versions (another `X-GitHub-Api-Version` is
 * refused), `/repositories/<id>/...` as another name for a repository's paths, request counts, and test hooks under `/_forge/`.
 *
 * @example
 * const forge = await startForge({ dir });
 * const octokit = new Octokit({ baseUrl: forge.url, auth: token });
 * await octokit.rest.issues.listForRepo({ owner: "demo", repo: "widgets" });
 * await forge.close();
 */
import { sha256Hex } from "../sha256.ts";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import { isoSeconds } from "../clock.ts";
import { ensureBareRepo } from "./git.ts";
import { ForgeHttpError, notFound } from "./http.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { graphqlRoutes } from "./graphql.ts";
import { issueRoutes } from "./issues.ts";
import { commitRoutes } from "./commits.ts";
import { pullRoutes } from "./pulls.ts";
import { reviewRoutes } from "./reviews.ts";
import { checkRoutes } from "./checks.ts";
import { dependencyRoutes } from "./dependencies.ts";
import { refRoutes } from "./refs.ts";
import { repoRoutes } from "./repos.ts";
import { makeRouter } from "./router.ts";
import type { RouteMatch } from "./router.ts";
import type { ForgeData } from "./state.ts";
import { bareRepoPath, loadForgeData, saveForgeData, stateStamp, userByToken } from "./state.ts";
import type { ForgeUser } from "./state.ts";
import { ContentLimits, Faults, RateLimits, RequestCounter, faultAnswer, rateHeaders, secondaryLimitAnswer } from "./traffic.ts";
import type { ForgeStats, RateSetting } from "./traffic.ts";

/** How to start a forge. */
export interface ForgeOptions {
  /** The folder holding the forge's state, its bare repositories and `stats.json`. */
  dir: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** A loopback address; the default is 127.0.0.1. */
  host?: string;
  /** Requests per user per hour (default 5000, as on GitHub). */
  rateLimit?: number;
  /** Content-creating requests per user per minute and per hour before the secondary rate limit refuses one (default 80 and 500, as on GitHub). */
  contentLimit?: { perMinute?: number; perHour?: number };
  /** The forge's clock, for timestamps and the rate-limit window (default: real time). */
  now?: () => Date;
  /** Where an unexpected error in a handler is reported (default: stderr). */
  onError?: (error: unknown) => void;
}

/** A running forge. */
export interface Forge {
  /** The API root, e.g. `http://127.0.0.1:41234`: Octokit's `baseUrl`. */
  url: string;
  port: number;
  /** The folder the forge keeps its state in. */
  dir: string;
  /** Stops listening, ends open connections and writes the last stats. */
  close(): Promise<void>;
  /** The request counts so far. */
  stats(): ForgeStats;
  /** Every route the forge serves (GitHub's REST paths, GraphQL's, `/rate_limit`), in the order they are tried. */
  routes: ReadonlyArray<{ method: string; template: string }>;
}

/** The `X-GitHub-Api-Version` values GitHub accepts; a request may also send none. */
export const API_VERSIONS = ["2022-11-28", "2026-03-10"] as const;

/** Who a request without a token is: no login, so no repository's collaborator (a private one is Not Found). */
const ANONYMOUS: ForgeUser = { id: 0, login: "", token: "" };

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Starts a forge on loopback, with the state its folder holds (or an empty one). */
export async function startForge(options: ForgeOptions): Promise<Forge> {
  const { dir, port = 0, host = "127.0.0.1" } = options;
  if (!LOOPBACK.has(host)) throw new RangeError(`The sandbox forge listens on loopback only, not "${host}"`);
  const now = options.now ?? (() => new Date());
  const onError = options.onError ?? ((error: unknown) => process.stderr.write(`forge: ${error instanceof Error ? error.stack : String(error)}\n`));
  let data = loadForgeData(dir);
  saveForgeData(dir, data);
  let stamp = stateStamp(dir);
  for (const repo of data.repos) {
    await ensureBareRepo(bareRepoPath(dir, repo.owner, repo.name), repo.default_branch, `# ${repo.name}\n`, { name: repo.owner, email: `${repo.owner}@users.noreply.forge.invalid`, date: repo.created_at });
  }
  const counter = new RequestCounter(now);
  const limits = new RateLimits(options.rateLimit ?? 5000, now);
  const anonymousLimits = new RateLimits(60, now);
  const faults = new Faults();
  const content = new ContentLimits(options.contentLimit ?? {}, now);
  const statsFile = join(dir, "stats.json");
  const writeStats = () => writeFileAtomic(statsFile, JSON.stringify(counter.snapshot(), null, 2) + "\n");
  writeStats();
  let requests = 0;
  let writing: Promise<unknown> = Promise.resolve();
  let url = "";

  const routes: Route[] = [
    ...repoRoutes,
    ...issueRoutes,
    ...dependencyRoutes,
    // Before the pull requests': their `/pulls/{number}` would take `/pulls/comments`.
    ...reviewRoutes,
    ...pullRoutes,
    ...checkRoutes,
    ...refRoutes,
    ...commitRoutes,
    ...graphqlRoutes,
    { method: "GET", template: "/rate_limit", handler: (ctx) => ({ status: 200, body: rateLimitBody(limits.peek(ctx.user.login), now()) }) },
  ];
  const matchRoute = makeRouter(routes);

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      onError(error);
      if (!res.headersSent) send(res, 500, { message: "Server Error" }, {});
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `F0RGE:${(++requests).toString(16).toUpperCase()}`;
    // Appended, not resolved: a path such as `//x` must stay a path, never become a host.
    const asked = new URL(url + (req.url?.startsWith("/") ? req.url : "/"));
    const method = (req.method ?? "GET").toUpperCase();
    const raw = await readBody(req);
    if (asked.pathname.startsWith("/_forge/")) return hook(method, asked.pathname, raw, res);
    if (stateStamp(dir) !== stamp) {
      data = loadForgeData(dir);
      stamp = stateStamp(dir);
    }
    // `/repositories/<id>/...` is GitHub's other name for `/repos/<owner>/<name>/...` (its Link headers use it).
    const target = new URL(asked);
    target.pathname = byRepositoryId(data, asked.pathname);
    const found = matchRoute(method, target.pathname);
    const routeName = `${method} ${found?.route.template ?? "(no route)"}`;
    const agent = String(req.headers["user-agent"] ?? "");
    const count = (status: number, how: { faulted?: boolean; rateLimited?: boolean } = {}) => counter.count(routeName, status, { ...how, agent });
    // GitHub names the API version it answered with: the one asked for, else its default (none for a version it refuses).
    const asking = req.headers["x-github-api-version"];
    const selected = asking === undefined ? API_VERSIONS[0] : (API_VERSIONS as readonly string[]).includes(String(asking)) ? String(asking) : undefined;
    const base = { "x-github-request-id": requestId, "x-github-media-type": "github.v3; format=json", ...(selected ? { "x-github-api-version-selected": selected } : {}) };
    // As on GitHub, a GET without a token reads public repositories under the anonymous limit (60 an hour per client address).
    const anonymous = req.headers.authorization === undefined && method === "GET" && found !== undefined && found.route.template !== "/user" && !found.route.template.startsWith("/user/") ? ANONYMOUS : undefined;
    const user = anonymous ?? userByToken(data, tokenOf(req.headers.authorization));
    const bucket = anonymous ? anonymousLimits : limits;
    const who = anonymous ? `address ${req.socket.remoteAddress}` : user?.login ?? "";
    // Every answer states a rate limit, errors included, as GitHub's do: the caller's, or an anonymous one's.
    let rate = user ? bucket.peek(who) : { limit: 60, remaining: 60, used: 0, reset: Math.floor(now().getTime() / 1000) + 3600 };

    const fault = faults.take(method, asked.pathname) ?? (asked.pathname !== target.pathname ? faults.take(method, target.pathname) : undefined);
    if (fault?.delay_ms) await sleep(fault.delay_ms);
    const faulted = fault && faultAnswer(fault, requestId);
    if (faulted) {
      count(faulted.status, { faulted: true });
      writeStats();
      return send(res, faulted.status, faulted.body, { ...base, ...faulted.headers, ...rateHeaders(rate) });
    }

    const version = req.headers["x-github-api-version"];
    if (version !== undefined && !(API_VERSIONS as readonly string[]).includes(String(version))) {
      count(400);
      writeStats();
      const message = `Unsupported 'X-GitHub-Api-Version' header value: '${version}'. The supported versions are: ${API_VERSIONS.join(", ")}`;
      const body = { message, documentation_url: "https://docs.github.com/rest/about-the-rest-api/api-versions", status: "400" };
      return send(res, 400, body, { ...base, ...rateHeaders(rate) });
    }

    if (!user) {
      count(401);
      writeStats();
      return send(res, 401, { message: req.headers.authorization === undefined ? "Requires authentication" : "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" }, { ...base, ...rateHeaders(rate) });
    }
    if (rate.remaining === 0) {
      count(403, { rateLimited: true });
      writeStats();
      const message = anonymous ? `API rate limit exceeded for ${req.socket.remoteAddress}. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)` : `API rate limit exceeded for user ID ${user.id}. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`;
      const body = { message, documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api", status: "403" };
      return send(res, 403, body, { ...base, ...rateHeaders(rate) });
    }

    const wait = found?.route.writes ? content.take(user.login) : undefined;
    if (wait !== undefined) {
      count(403, { rateLimited: true });
      writeStats();
      const refused = secondaryLimitAnswer(requestId, wait);
      return send(res, refused.status, refused.body, { ...base, ...refused.headers, ...rateHeaders(rate) });
    }

    const reply = await answer(found, method, target, raw, user);
    const json = reply.status === 204 || reply.body === undefined ? "" : JSON.stringify(reply.body);
    const headers: Record<string, string> = { ...base, ...reply.headers };
    if (method === "GET" && reply.status === 200) {
      // The tag is the viewer's as well as the answer's (GitHub's vary on Authorization): another token's tag never earns a 304.
      headers.etag = `W/"${sha256Hex(`${json}\0${headers.link ?? ""}\0${user.id}`).slice(0, 40)}"`;
      headers["cache-control"] = "private, max-age=60, s-maxage=60";
      headers.vary = "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding";
      if (etagMatches(req.headers["if-none-match"], headers.etag)) {
        count(304);
        writeStats();
        return send(res, 304, undefined, { ...headers, ...rateHeaders(rate) });
      }
    }
    // /rate_limit costs nothing on GitHub either.
    if (found?.route.template !== "/rate_limit") rate = bucket.spend(who);
    count(reply.status);
    writeStats();
    send(res, reply.status, json === "" ? undefined : json, { ...headers, ...rateHeaders(rate), "x-oauth-scopes": "repo" });
  }

  async function answer(found: RouteMatch | undefined, method: string, target: URL, raw: string, caller: ForgeUser): Promise<Reply> {
    try {
      if (!found) throw notFound();
      let body: unknown;
      if (raw.trim() !== "" && method !== "GET") {
        try {
          body = JSON.parse(raw);
        } catch {
          throw new ForgeHttpError(400, { message: "Problems parsing JSON" });
        }
      }
      const run = async () => {
        // Looked up again: the state may have been reloaded since the request was authenticated.
        const user = caller === ANONYMOUS ? ANONYMOUS : data.users.find((u) => u.id === caller.id)!;
        const ctx: RouteContext = {
          params: found.params,
          query: target.searchParams,
          body,
          url: target,
          user,
          data,
          dir,
          shapes: { base: url, data, clonePath: (repo) => bareRepoPath(dir, repo.owner, repo.name) },
          now: () => isoSeconds(now()),
        };
        const reply = await found.route.handler(ctx);
        if (found.route.writes && !found.route.gitOnly && reply.status < 400) {
          saveForgeData(dir, data);
          stamp = stateStamp(dir);
        }
        return reply;
      };
      if (!found.route.writes || found.route.gitOnly) return await run();
      // Writes run one at a time: a merge awaits git between reading and changing the state.
      const result = writing.then(run);
      writing = result.catch(() => undefined);
      return await result;
    } catch (error) {
      if (error instanceof ForgeHttpError) return { status: error.status, body: error.body, headers: error.headers };
      onError(error);
      return { status: 500, body: { message: "Server Error", status: "500" } };
    }
  }

  function hook(method: string, path: string, raw: string, res: ServerResponse): void {
    const parse = (): unknown => (raw.trim() === "" ? {} : JSON.parse(raw));
    try {
      if (method === "GET" && path === "/_forge/stats") return send(res, 200, counter.snapshot(), {});
      if (method === "POST" && path === "/_forge/reset-stats") {
        counter.reset();
        writeStats();
        return send(res, 200, counter.snapshot(), {});
      }
      if (method === "GET" && path === "/_forge/faults") return send(res, 200, faults.list(), {});
      if (method === "DELETE" && path === "/_forge/faults") {
        faults.clear();
        return send(res, 204, undefined, {});
      }
      if (method === "POST" && path === "/_forge/faults") {
        const given = parse();
        for (const spec of Array.isArray(given) ? given : [given]) faults.add(Faults.validate(spec));
        return send(res, 201, faults.list(), {});
      }
      if (method === "POST" && path === "/_forge/rate-limit") {
        limits.set(parse() as RateSetting);
        return send(res, 200, { ok: true }, {});
      }
      send(res, 404, { message: "Not Found" }, {});
    } catch (error) {
      send(res, 400, { message: error instanceof Error ? error.message : String(error) }, {});
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  url = `http://${host.includes(":") ? `[${host}]` : host}:${actualPort}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port: actualPort,
    dir,
    stats: () => counter.snapshot(),
    routes: routes.map(({ method, template }) => ({ method, template })),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => writing).then(() => writeStats());
      return closing;
    },
  };
}

function rateLimitBody(state: ReturnType<RateLimits["peek"]>, at: Date): Record<string, unknown> {
  const core = { limit: state.limit, used: state.used, remaining: state.remaining, reset: state.reset };
  // The forge serves no search; its limit is stated as GitHub states an unused one.
  const search = { limit: 30, used: 0, remaining: 30, reset: Math.floor(at.getTime() / 1000) + 60 };
  return { resources: { core, search }, rate: core };
}

/** A `/repositories/<id>/...` path as the `/repos/<owner>/<name>/...` path it names; any other path as it is. */
function byRepositoryId(data: ForgeData, path: string): string {
  const match = /^\/repositories\/(\d+)(\/.*)?$/.exec(path);
  const repo = match && data.repos.find((r) => r.id === Number(match[1]));
  return repo ? `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}${match[2] ?? ""}` : path;
}

/** The token of an `Authorization: token X` or `Bearer X` header. */
function tokenOf(header: string | undefined): string {
  const match = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1] : "\0no token";
}

/** Whether an `If-None-Match` header names this ETag (weak comparison, as GitHub does). */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(etag));
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
  const all: Record<string, string> = { ...headers };
  if (text !== "") {
    all["content-type"] = "application/json; charset=utf-8";
    all["content-length"] = String(Buffer.byteLength(text));
  }
  res.writeHead(status, all);
  res.end(status === 304 || status === 204 ? undefined : text);
}

/** A request's whole body as text (the forge's, and the loopback receivers' in lib/testing). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
