/**
 * The dashboard's own files: its stylesheet and scripts (lib/web/static/), and xterm.js with
 * its stylesheet from the package. A fixed list: no path a request names is ever joined to a
 * folder, so nothing outside these files can be served.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Hono } from "hono";
import type { WebEnv } from "./context.ts";

const require = createRequire(import.meta.url);
const own = (name: string) => new URL(`./static/${name}`, import.meta.url);
const XTERM = require.resolve("@xterm/xterm");

/** What `/static/<name>` serves: where it is read from and its type. */
const FILES: Record<string, { from: URL | string; type: string }> = {
  "dashboard.css": { from: own("dashboard.css"), type: "text/css; charset=utf-8" },
  "dashboard.js": { from: own("dashboard.js"), type: "text/javascript; charset=utf-8" },
  "terminal.js": { from: own("terminal.js"), type: "text/javascript; charset=utf-8" },
  "xterm.js": { from: XTERM, type: "text/javascript; charset=utf-8" },
  "xterm.css": { from: XTERM.replace(/lib[\\/]xterm\.js$/, "css/xterm.css"), type: "text/css; charset=utf-8" },
};

/** Serves the files, each read once on first request. */
export function staticRoutes(app: Hono<WebEnv>): void {
  const cache = new Map<string, Uint8Array>();
  // No icon: an empty answer, so a browser's ask for one is not an error.
  app.get("/favicon.ico", (c) => c.body(null, 204));
  app.get("/static/:name", (c) => {
    const name = c.req.param("name");
    const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
    if (!file) return c.text("no such file\n", 404);
    let body = cache.get(name);
    if (!body) cache.set(name, body = readFileSync(file.from));
    return c.body(body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": file.type });
  });
}
