/**
 * Test support for the dashboard's guard: a small app behind `guard` and `loginRoutes`, served
 * over real HTTP on loopback, and requests to it with any Host header (node:http, since fetch
 * will not send a Host of its choosing).
 */
import { request as httpRequest } from "node:http";
import { randomBytes } from "node:crypto";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { html } from "hono/html";
import type { WebEnv } from "../web/context.ts";
import { loginRoutes } from "../web/login.ts";
import { guard } from "../web/security.ts";
import type { WebAccess } from "../web/security.ts";

/** A token long enough for `webAccess`. */
export const TEST_TOKEN = "test-token-0123456789abcdef";

/** Access for a server on 127.0.0.1 with no token, changed by `overrides`. */
export function testAccess(overrides: Partial<WebAccess> = {}): WebAccess {
  return { bind: "127.0.0.1", port: 0, token: null, allowedHosts: [], secret: new Uint8Array(randomBytes(32)), ...overrides };
}

/** A guarded app listening on 127.0.0.1. */
export interface GuardedApp {
  port: number;
  /** `127.0.0.1:<port>`: the Host and Origin a browser on this machine sends. */
  host: string;
  close(): Promise<void>;
}

/**
 * Serves guard + loginRoutes + a page (GET /, showing its CSRF token as `csrf=<token>`, and a form
 * posting a `note` to POST /poke, which answers with it), an API (GET and POST /api/things),
 * static files (/static/dashboard.css, /static/app.js) and a route that throws (GET /boom);
 * `routes` adds more.
 */
export async function startGuardedApp(access: WebAccess, routes: (app: Hono<WebEnv>) => void = () => {}): Promise<GuardedApp> {
  const app = new Hono<WebEnv>();
  app.use(guard(access));
  loginRoutes(app, access);
  routes(app);
  app.get("/", (c) => c.html(html`<p>csrf=${c.get("csrf")}</p>
<form method="post" action="/poke"><input type="hidden" name="csrf" value="${c.get("csrf")}"><input name="note" value="from the page"><button type="submit">poke</button></form>`));
  app.post("/poke", async (c) => c.text(`poked: ${(await c.req.parseBody()).note ?? ""}`));
  app.get("/api/things", (c) => c.json({ things: 2 }));
  app.post("/api/things", (c) => c.json({ made: true }));
  app.get("/static/dashboard.css", (c) => c.body("body{}", 200, { "Content-Type": "text/css" }));
  app.get("/static/app.js", (c) => c.body("1", 200, { "Content-Type": "text/javascript" }));
  app.get("/boom", () => {
    throw new Error("boom");
  });
  app.onError((_error, c) => c.text("Internal error\n", 500));
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(listening));
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    host: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Runs `fn` with a guarded app (`startGuardedApp`) for `access`, closed after it, however it ends. */
export async function withGuardedApp(access: WebAccess, fn: (app: GuardedApp, access: WebAccess) => Promise<void>): Promise<void> {
  const app = await startGuardedApp(access);
  try {
    await fn(app, access);
  } finally {
    await app.close();
  }
}

/** A response as a test reads it. */
export interface WebResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The Set-Cookie headers, each whole. */
  cookies: string[];
}

/** What `send` sends: Host defaults to the app's own; `form` is sent url-encoded. */
export interface WebRequest {
  method?: string;
  headers?: Record<string, string>;
  form?: Record<string, string>;
  /** false: no Host header at all. */
  host?: string | false;
  /** The client's own address (any of 127.0.0.0/8): another client as the server sees it. */
  from?: string;
}

/** One request to `app` on its loopback port. */
export function send(app: GuardedApp, path: string, options: WebRequest = {}): Promise<WebResponse> {
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) {
    headers["Content-Type"] ??= "application/x-www-form-urlencoded";
    headers["Content-Length"] = String(Buffer.byteLength(body));
  }
  if (options.host !== false) headers.Host = options.host ?? app.host;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: app.port, localAddress: options.from, path, method: options.method ?? (body === undefined ? "GET" : "POST"), headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const cookies = res.headers["set-cookie"] ?? [];
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), cookies });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The CSRF token the app's page (GET /) shows to a client with `cookie` (none: not logged in or no login). */
export async function pageCsrf(app: GuardedApp, cookie?: string): Promise<string> {
  const page = await send(app, "/", cookie ? { headers: { Cookie: cookie } } : {});
  const match = /csrf=([A-Za-z0-9_-]+)/.exec(page.body);
  if (!match) throw new Error(`GET / showed no CSRF token (status ${page.status})`);
  return match[1];
}

/** The CSRF token in the login form. */
export async function loginCsrf(app: GuardedApp): Promise<string> {
  const page = await send(app, "/login");
  const match = /name="csrf" value="([A-Za-z0-9_-]+)"/.exec(page.body);
  if (!match) throw new Error(`GET /login showed no CSRF field (status ${page.status})`);
  return match[1];
}
