/**
 * The dashboard's door: which requests `robot-army serve` answers at all, and how every answer
 * is wrapped. One middleware (`guard`) runs before every route: the security headers, the
 * Host check that stops DNS rebinding against a loopback server, the token when one is
 * configured (always beyond loopback), the per-client limit on wrong tokens, and the CSRF
 * token plus `Origin` every state-changing request needs. The login form that sets the session
 * cookie lives in `login.ts`.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import type { CookieOptions } from "hono/utils/cookie";
import { deleteCookie, getCookie } from "hono/cookie";
import { readSecretFile } from "../secret-file.ts";
import { now } from "../clock.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import type { WebEnv } from "./context.ts";

/** Who may use one dashboard server: what it is bound to, its token, and the key of its CSRF tokens. */
export interface WebAccess {
  /** The address the server listens on, as given (`127.0.0.1`, `::1`, `0.0.0.0`, a name). */
  bind: string;
  /** The port it listens on (0: any free one). */
  port: number;
  /** The token every request needs (from `[web] token_file`), or null: no login (loopback only). */
  token: string | null;
  /** `[web] allowed_hosts`: names a request's Host may carry besides the address bound. */
  allowedHosts: readonly string[];
  /** Random per server process; keys the CSRF tokens, so a restart makes old forms stale. */
  secret: Uint8Array;
}

/** The cookie the login form sets: derived from the token and the server's secret (never the token itself). */
export const SESSION_COOKIE = "ra_session";

/** How long a browser keeps the session cookie (a restart of the server ends it sooner). */
const SESSION_MAX_AGE_S = 7 * 24 * 60 * 60;

/**
 * Headers a reverse proxy adds. A server with no token is for this machine alone, and a
 * request carrying one of these came through a proxy, so from beyond it.
 */
const PROXY_HEADERS = ["forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip", "via"] as const;

/** Wrong tokens a client may present within `WRONG_TOKEN_WINDOW_MS` before it is refused with 429. */
const WRONG_TOKENS_ALLOWED = 5;
const WRONG_TOKEN_WINDOW_MS = 60_000;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'";

/** What every response carries (a response that set one of these itself keeps its own). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": CSP,
  "X-Content-Type-Options": "nosniff",
  // Not no-referrer: under it a browser sends `Origin: null` with a form's POST, and the Origin check
  // could not tell the dashboard's own forms from anyone's. same-origin still tells other sites nothing.
  "Referrer-Policy": "same-origin",
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** Shorter than this, a token falls to guessing even at five tries a minute. */
const MIN_TOKEN_LENGTH = 16;
/** The largest form body the guard reads for its `csrf` field. */
const FORM_LIMIT = 64 * 1024;

/** Requests the dashboard answers at once (a live terminal counts until its stream is made; its streams have their own bound). */
export const MAX_IN_FLIGHT = 64;
const WEB_TOKEN_ROLE = { file: "web token file", key: "[web] token_file", holds: "the dashboard's token" };

/**
 * Whether `bind` is a loopback address: 127.0.0.0/8, ::1 (also as `[::1]`) or `localhost`.
 * Anything else, 0.0.0.0 and :: included, reaches beyond this machine.
 */
export function isLoopback(bind: string): boolean {
  const host = canonicalHost(bind);
  if (host === undefined) return false;
  if (host === "localhost" || host === "[::1]") return true;
  const v4 = mappedIPv4(host) ?? host;
  return isIPv4(v4) && v4.startsWith("127.");
}

/**
 * Who may use the dashboard bound to `bind:port`: the token read from `[web] token_file` (the
 * 0600 rules of every credential file) whenever it is set, loopback or not, and a fresh CSRF
 * key. Bound beyond loopback without a token file it throws a PreconditionError, so no server
 * starts that anyone on the network could use.
 */
export function webAccess(config: Config, bind: string, port: number): WebAccess {
  const file = config.web.token_file;
  if (file === undefined && !isLoopback(bind)) {
    throw new PreconditionError(`The dashboard bound to "${bind}" is reachable beyond loopback and needs a token: set [web] token_file to a 0600 file holding it, or bind 127.0.0.1`);
  }
  // A name in allowed_hosts is a name the dashboard is reached by: from elsewhere (a proxy, the LAN).
  const remote = config.web.allowed_hosts.find((name) => !isLoopback(name));
  if (file === undefined && remote !== undefined) {
    throw new PreconditionError(`[web] allowed_hosts names "${remote}", so the dashboard is reached from beyond this machine and needs a token: set [web] token_file to a 0600 file holding it`);
  }
  const token = file === undefined ? null : readSecretFile(file, WEB_TOKEN_ROLE);
  if (token !== null && token.length < MIN_TOKEN_LENGTH) {
    throw new PreconditionError(`Web token file "${file}" holds a token of ${token.length} characters; it needs at least ${MIN_TOKEN_LENGTH} (openssl rand -hex 32 > "${file}")`);
  }
  return { bind, port, token, allowedHosts: [...config.web.allowed_hosts], secret: new Uint8Array(randomBytes(32)) };
}

/**
 * The middleware every dashboard request passes first. In order: a Host that is not this
 * server's is refused (421); with no token configured, a request that came through a proxy is
 * refused (403); with a token, a client with too many wrong tokens is refused (429) when it
 * presents a wrong credential or posts the login form, a request without the session cookie
 * (or, for /api, `Authorization: Bearer`) is sent to /login (a page) or refused (401); a
 * request that is not GET or HEAD needs the CSRF token (form field `csrf` or header
 * `X-CSRF-Token`) and an `Origin` that is this request's own origin (403).
 * Sets `c.get("csrf")` for pages to put in their forms. Every answer, its own refusals and the
 * app's errors alike, carries `SECURITY_HEADERS`.
 */
export function guard(access: WebAccess): MiddlewareHandler<WebEnv> {
  const hosts = hostRule(access);
  const login = access.token === null ? null : { token: access.token, session: sessionCookieValue(access.token, access.secret) };
  let inFlight = 0;
  return async (c, next) => {
    // Requests being answered at once are bounded: a flood waits its turn elsewhere, never in this process's memory.
    if (inFlight >= MAX_IN_FLIGHT) {
      c.header("Retry-After", "1");
      return secured(c.text(`Refused: the dashboard is answering ${MAX_IN_FLIGHT} requests already; try again in a second\n`, 503));
    }
    inFlight++;
    try {
      const refusal = await admit(c, access, hosts, login);
      if (refusal) return secured(refusal);
      await next();
    } finally {
      inFlight--;
    }
    try {
      secured(c.res);
    } catch {
      // A response with immutable headers (one fetched from elsewhere): copied, then wrapped.
      c.res = new Response(c.res.body, c.res);
      secured(c.res);
    }
  };
}

/**
 * The session cookie's value for `token` on the server whose random `secret` (`WebAccess.secret`)
 * is given: an HMAC keyed by both, so it changes when the token does and a restart of the
 * server ends every login.
 */
export function sessionCookieValue(token: string, secret: Uint8Array): string {
  return createHmac("sha256", secret).update("robot-army web session\0").update(token).digest("base64url");
}

/**
 * How the session cookie is set and cleared: HttpOnly, SameSite=Strict, Path=/, Max-Age of seven
 * days, and Secure when the request came over https (directly, or through a proxy that says so
 * in X-Forwarded-Proto: a cookie is set only with a token configured, where a proxy is allowed).
 */
export function sessionCookieOptions(c: Context): CookieOptions {
  const secure = schemeOf(c, true) === "https";
  return { httpOnly: true, sameSite: "Strict", path: "/", secure, maxAge: SESSION_MAX_AGE_S };
}

/**
 * Whether `presented` is the dashboard's token, compared in constant time; a wrong one counts
 * against the request's client (five within a minute and it is refused with 429). The login
 * form's POST was counted as a wrong try by the guard before its body was read, so guesses sent
 * at once are counted as they arrive, not after: a right token takes that try back.
 */
export function acceptsToken(c: Context<WebEnv>, access: WebAccess, presented: string): boolean {
  const counted = c.get("loginTry");
  if (access.token !== null && sameSecret(presented, access.token)) {
    if (counted !== undefined) uncountTry(access, clientOf(c), counted);
    return true;
  }
  if (counted === undefined) countWrongToken(access, clientOf(c));
  return false;
}

/** The refusal for this request, or undefined when it may go on to its route. */
async function admit(c: Context<WebEnv>, access: WebAccess, hosts: HostRule, login: Login | null): Promise<Response | undefined> {
  // Only with a token may a proxy's word be taken for the scheme (without one, a proxy is refused below).
  const scheme = schemeOf(c, login !== null);
  const hostHeader = c.req.header("host");
  const host = hostHeader === undefined ? undefined : parseHost(hostHeader);
  // An absolute request target (`GET http://other/ HTTP/1.1`) names its own host: it must be the Host's.
  if (host === undefined || !hosts.allows(host.name, host.port ?? defaultPort(scheme)) || new URL(c.req.url).hostname !== host.name) {
    const named = hostHeader === undefined ? "no Host header" : `Host "${hostHeader.slice(0, 100)}"`;
    return c.text(`Refused: ${named} is not a name this dashboard answers to; a name that should reach it goes in [web] allowed_hosts\n`, 421);
  }
  let by: Credential | undefined;
  if (login === null) {
    const proxied = PROXY_HEADERS.find((name) => c.req.header(name) !== undefined);
    if (proxied !== undefined) {
      return c.text(`Refused: this request came through a proxy (it carries ${proxied}), so from beyond this machine, and this dashboard has no token: set [web] token_file\n`, 403);
    }
    c.set("csrf", csrfToken(access.secret, "loopback"));
    c.set("actor", `web (no login) from ${clientOf(c)}`);
  } else {
    const answer = authenticate(c, access, login);
    if (answer instanceof Response) return answer;
    by = answer;
    // Who acts, as the audit log names them: the login session by a digest of its cookie (never the cookie), or the API's token.
    const cookie = getCookie(c, SESSION_COOKIE);
    const who = by === "bearer" ? "web api (bearer token)" : by === "cookie" && cookie ? `web session ${createHash("sha256").update(cookie).digest("hex").slice(0, 8)}` : "web (not logged in)";
    c.set("actor", `${who} from ${clientOf(c)}`);
  }
  if (c.req.method === "GET" || c.req.method === "HEAD") return undefined;
  // No request that changes something carries more than a form: its size is known, and judged, before a byte of it is read.
  const tooLarge = bodyRefusal(c);
  if (tooLarge) return tooLarge;
  // A Bearer token is never sent by a browser on its own, so a request carrying the right one is no forgery.
  if (by === "bearer") return undefined;
  return await checkForgery(c, `${scheme}://${host.name}${host.port === undefined ? "" : `:${host.port}`}`);
}

/** With a token configured: the token, and the session cookie's value that stands for it. */
interface Login {
  token: string;
  session: string;
}

/** What let a request in when a token is configured. */
type Credential = "cookie" | "bearer";

/**
 * With a token configured: the credential the request carries (undefined on a public path
 * without one), or its refusal. Sets the request's CSRF token, tied to its session cookie.
 *
 * A client with too many wrong tokens is refused (429) only where it could guess the token:
 * posting the login form, or presenting a Bearer. A Bearer is the token itself: were the right
 * one let through while limited, a guesser would learn which guess was right however many it
 * made, so a Bearer, right or wrong, waits out the limit, and so does the login form's token,
 * whatever cookie comes with them. A request with a valid session cookie and no Bearer passes
 * (an owner logged in stays in, though a guesser shares the address: a LAN's /64, a proxy), and
 * so does one presenting nothing, which gets the login form. The cookie is an HMAC keyed by
 * this process's random secret: it cannot be guessed nor made from a guessed token, so a stale
 * one (the token changed, the server restarted) is cleared, not counted as a guess.
 */
function authenticate(c: Context<WebEnv>, access: WebAccess, login: Login): Credential | undefined | Response {
  const path = c.req.path;
  const api = path === "/api" || path.startsWith("/api/");
  const client = clientOf(c);
  const bearer = api ? bearerOf(c.req.header("authorization")) : undefined;
  const cookie = getCookie(c, SESSION_COOKIE);
  const cookieValid = cookie !== undefined && sameSecret(cookie, login.session);
  // A stale cookie (the token changed, the server restarted) is cleared, so a browser counts once, not once a request.
  if (cookie !== undefined && !cookieValid) deleteCookie(c, SESSION_COOKIE, sessionCookieOptions(c));
  const loggingIn = c.req.method === "POST" && path === "/login";
  const guessing = bearer !== undefined || loggingIn;
  const wait = guessing ? secondsLimited(access, client) : undefined;
  if (wait !== undefined) {
    c.header("Retry-After", String(wait));
    const message = `Refused: too many wrong tokens from this address; try again in ${wait} s`;
    return api ? c.json({ error: message }, 429) : c.text(`${message}\n`, 429);
  }
  // Counted now, before the body that holds the guess is read: the sixth of many sent at once is refused above.
  if (loggingIn) c.set("loginTry", countWrongToken(access, client));
  // A Bearer decides alone: a wrong one is a wrong try and lets nothing in, whatever cookie comes with it.
  const by: Credential | undefined = bearer !== undefined ? (sameSecret(bearer, login.token) ? "bearer" : undefined) : cookieValid ? "cookie" : undefined;
  if (bearer !== undefined && by === undefined) countWrongToken(access, client);
  c.set("csrf", csrfToken(access.secret, cookieValid ? cookie : "login"));
  if (by !== undefined || isPublic(c.req.method, path)) return by;
  if (api) {
    c.header("WWW-Authenticate", 'Bearer realm="robot-army"');
    return c.json({ error: "This dashboard needs its token: send Authorization: Bearer <token>, or log in at /login" }, 401);
  }
  if (path.startsWith("/static/")) return c.text("Refused: log in at /login first\n", 401);
  // Only a page asked for with GET is worth coming back to after the login.
  if (c.req.method !== "GET" && c.req.method !== "HEAD") return c.redirect("/login", 303);
  const url = new URL(c.req.url);
  return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
}

/**
 * The refusal of a state-changing request whose `Origin` is not `own` (the request's own origin:
 * its scheme and its Host as sent, so another port of the same host is another origin) or that
 * lacks the CSRF token; undefined when it may go on.
 */
async function checkForgery(c: Context<WebEnv>, own: string): Promise<Response | undefined> {
  const origin = originOf(c.req.header("origin"));
  if (origin === undefined || origin !== originOf(own)) {
    return c.text("Refused: a request that changes something needs an Origin header naming this dashboard\n", 403);
  }
  let presented = c.req.header("x-csrf-token");
  if (presented === undefined && isForm(c.req.header("content-type"))) {
    // Hono keeps the parsed body, so the route reads the same form again.
    const field = await c.req.parseBody().then((form) => form.csrf, () => undefined);
    if (typeof field === "string") presented = field;
  }
  if (presented === undefined || !sameSecret(presented, c.get("csrf"))) {
    return c.text("Refused: the CSRF token is missing or stale; reload the page and try again\n", 403);
  }
  return undefined;
}

/**
 * The refusal of a body that could be larger than a form: one of unknown length (chunked, or no
 * Content-Length) is 411, one of more than FORM_LIMIT bytes 413, whichever way its CSRF token
 * comes; undefined for a body of known, small length, or none.
 */
function bodyRefusal(c: Context<WebEnv>): Response | undefined {
  const length = c.req.header("content-length");
  const chunked = /chunked/i.test(c.req.header("transfer-encoding") ?? "");
  if (length === undefined) return chunked ? c.text("Refused: a request body needs a Content-Length\n", 411) : undefined;
  if (!/^\d+$/.test(length.trim()) || !(Number(length) <= FORM_LIMIT)) return c.text(`Refused: a request body of more than ${FORM_LIMIT} bytes\n`, 413);
  return undefined;
}

/** What needs no login: the login form itself and the one stylesheet it links. */
function isPublic(method: string, path: string): boolean {
  if (path === "/login") return method === "GET" || method === "HEAD" || method === "POST";
  if (path === "/logout") return method === "POST";
  return path === "/static/dashboard.css" && (method === "GET" || method === "HEAD");
}

function csrfToken(secret: Uint8Array, subject: string): string {
  return createHmac("sha256", secret).update("csrf" + subject).digest("base64url");
}

/** Equality of two secrets that takes as long whatever they hold: their SHA-256 digests are compared, so lengths never leak. */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

function bearerOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1] : undefined;
}

function isForm(contentType: string | undefined): boolean {
  const type = contentType?.split(";")[0].trim().toLowerCase();
  return type === "application/x-www-form-urlencoded" || type === "multipart/form-data";
}

/** `text`'s origin as a URL serialises it (scheme, host, port but the scheme's default), or undefined. */
function originOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The scheme a request came over: its connection's, or, when `trustProxy` (a token is
 * configured), the first of X-Forwarded-Proto that is http or https.
 */
function schemeOf(c: Context, trustProxy: boolean): "http" | "https" {
  const forwarded = trustProxy ? c.req.header("x-forwarded-proto")?.split(",")[0].trim().toLowerCase() : undefined;
  if (forwarded === "http" || forwarded === "https") return forwarded;
  return new URL(c.req.url).protocol === "https:" ? "https" : "http";
}

function defaultPort(scheme: string): string {
  return scheme === "https" ? "443" : "80";
}

function secured(response: Response): Response {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    if (!response.headers.has(name)) response.headers.set(name, value);
  }
  return response;
}

// The Host check.

interface HostRule {
  /** Whether a canonical host name (`parseHost`) on `port` (digits) is this server's. */
  allows(host: string, port: string): boolean;
}

/**
 * The names this server answers to, on any port (a tunnel or a forwarded port may change it):
 * the address bound, the loopback names when bound to loopback, a `[web] allowed_hosts` entry
 * without a port, and, bound to 0.0.0.0 or ::, the literal addresses of this machine's
 * interfaces (read at each ask: they change); and an `allowed_hosts` entry with a port on that
 * port only. No other name, so a page on a foreign name that resolves here (DNS rebinding)
 * gets nothing.
 */
function hostRule(access: WebAccess): HostRule {
  const bound = canonicalHost(access.bind);
  const wildcard = bound === "0.0.0.0" || bound === "[::]";
  const anyPort = new Set<string>();
  const onPort = new Set<string>();
  for (const entry of access.allowedHosts) {
    const host = parseHost(entry);
    if (host === undefined) continue;
    if (host.port === undefined) anyPort.add(host.name);
    else onPort.add(`${host.name} ${host.port}`);
  }
  if (bound !== undefined && !wildcard) anyPort.add(bound);
  if (isLoopback(access.bind)) for (const name of ["127.0.0.1", "localhost", "[::1]"]) anyPort.add(name);
  return {
    allows: (host, port) => anyPort.has(host) || onPort.has(`${host} ${Number(port)}`) || (wildcard && interfaceAddresses().has(host)),
  };
}

function interfaceAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      const host = canonicalHost(entry.address);
      if (host !== undefined) addresses.add(host);
    }
  }
  return addresses;
}

const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/;

/**
 * A host as a URL spells it (lower case, IPv4 in dotted decimal, IPv6 shortened in brackets),
 * its port dropped; undefined for anything that is not a host with an optional port.
 */
function canonicalHost(text: string): string | undefined {
  return parseHost(text)?.name;
}

/** A host with an optional port: its name as `canonicalHost` spells it and its port as written (a number), or undefined. */
function parseHost(text: string): { name: string; port: string | undefined } | undefined {
  const bracketed = !text.startsWith("[") && text.split(":").length > 2 ? `[${text}]` : text;
  const match = HOST.exec(bracketed);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : String(Number(match[2]));
  try {
    return port !== undefined && Number(port) > 65535 ? undefined : { name: new URL(`http://${match[1]}/`).hostname, port };
  } catch {
    return undefined;
  }
}

/** `[::ffff:7f00:1]` as `127.0.0.1`; undefined for any other host. */
function mappedIPv4(host: string): string | undefined {
  const match = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(host);
  if (!match) return undefined;
  const [high, low] = [parseInt(match[1], 16), parseInt(match[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

// Wrong tokens, counted per client.

const wrongTokens = new WeakMap<WebAccess, Map<string, number[]>>();

function wrongTokensOf(access: WebAccess): Map<string, number[]> {
  let tries = wrongTokens.get(access);
  if (!tries) wrongTokens.set(access, tries = new Map());
  return tries;
}

/** Seconds until `client` may present a token again, or undefined when it may now. */
function secondsLimited(access: WebAccess, client: string): number | undefined {
  const at = now().getTime();
  const recent = (wrongTokensOf(access).get(client) ?? []).filter((t) => t > at - WRONG_TOKEN_WINDOW_MS);
  if (recent.length < WRONG_TOKENS_ALLOWED) return undefined;
  return Math.max(1, Math.ceil((recent[recent.length - WRONG_TOKENS_ALLOWED] + WRONG_TOKEN_WINDOW_MS - at) / 1000));
}

/** Counts a wrong try of `client`; returns its time, by which `uncountTry` takes it back. */
function countWrongToken(access: WebAccess, client: string): number {
  const at = now().getTime();
  const tries = wrongTokensOf(access);
  const recent = (tries.get(client) ?? []).filter((t) => t > at - WRONG_TOKEN_WINDOW_MS);
  tries.set(client, [...recent, at].slice(-WRONG_TOKENS_ALLOWED));
  // Clients whose window has passed are forgotten, so many addresses cannot grow the map for ever.
  if (tries.size > 10_000) {
    for (const [key, times] of tries) if (times.every((t) => t <= at - WRONG_TOKEN_WINDOW_MS)) tries.delete(key);
  }
  return at;
}

/** Takes back one try of `client` counted at `at` (a login whose token was right). */
function uncountTry(access: WebAccess, client: string, at: number): void {
  const tries = wrongTokensOf(access);
  const times = tries.get(client);
  const index = times?.lastIndexOf(at) ?? -1;
  if (times && index >= 0) tries.set(client, [...times.slice(0, index), ...times.slice(index + 1)]);
}

/**
 * The client a wrong token counts against: its address, an IPv4-mapped one as IPv4, and an
 * IPv6 one by its /64 (one host commonly holds a whole /64).
 */
export function clientOf(c: Context): string {
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    address = undefined;
  }
  if (address === undefined) return "unknown";
  const v4 = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  if (!isIPv6(v4)) return v4;
  const [head, tail] = v4.split("::");
  const front = head ? head.split(":") : [];
  const back = tail ? tail.split(":") : [];
  const groups = tail === undefined ? front : [...front, ...Array(Math.max(0, 8 - front.length - back.length)).fill("0"), ...back];
  return groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(":") + "::/64";
}
