/**
 * The dashboard's app: every request passes the guard (security.ts: Host, login, CSRF and
 * Origin, the security headers), then is a page (HTML, or with `?fragment=1` only its live
 * parts, which static/dashboard.js fetches to keep the page current), a page's data as JSON
 * under `/api/...`, an item's live terminal (server-sent events), one of the dashboard's own
 * files, a confirmation of a verb that could lose work (confirm.ts), or one of the owner's
 * verbs a button posts (actions.ts: through the function the command runs, as the web session).
 * A read-only dashboard (`serve --read-only`) shows no buttons and refuses every action.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { html } from "hono/html";
import { writeStderr } from "../cli.ts";
import { PreconditionError } from "../errors.ts";
import { redact, redactAll } from "../redact.ts";
import { latestSession } from "../work-items/sessions.ts";
import { lastAuditId } from "../store/audit.ts";
import { actionRoutes, Answers } from "./actions.ts";
import { ChangeWatch } from "./changes.ts";
import { confirmRoutes } from "./pages/confirm.ts";
import { approveRoutes } from "./pages/approve.ts";
import type { WebContext, WebEnv } from "./context.ts";
import { freshnessLine, freshnessOf, layout } from "./layout.ts";
import { NotFound, wholeNumber } from "./page.ts";
import type { AnyPage, PageRequest } from "./page.ts";
import { PAGES } from "./pages/index.ts";
import { clientOf, guard } from "./security.ts";
import type { WebAccess } from "./security.ts";
import { loginRoutes } from "./login.ts";
import { staticRoutes } from "./static.ts";
import { streamSlots, takeStreamSlot, terminalEvents } from "./terminal-events.ts";
import { terminalFeed } from "./terminal-feed.ts";
import { feedHub, sharedFeed } from "./shared-feed.ts";

/** The dashboard for `ctx`, guarded as `access` says. */
export function webApp(ctx: WebContext, access: WebAccess): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  app.use("*", guard(access));
  if (ctx.readOnly) app.use("*", readOnly);
  loginRoutes(app, access);
  staticRoutes(app);
  const answers = new Answers();
  for (const page of PAGES) mountPage(app, ctx, page, answers);
  confirmRoutes(app, ctx);
  approveRoutes(app, ctx);
  actionRoutes(app, ctx, answers);
  const slots = streamSlots();
  // What tells an open page to fetch its live parts now: the audit log grew.
  const changes = new ChangeWatch(ctx);
  app.get("/api/changes", (c) => changes.events(c));
  // Pages streaming the same session share one feed: one poll of its log or pane, however many watch.
  const feeds = feedHub();
  app.get("/api/items/:id/terminal", async (c) => {
    const id = itemId(c.req.param("id"));
    const store = await ctx.store();
    const session = store ? latestSession(store, id) : undefined;
    if (!session) throw new NotFound(`Work item ${id} has had no session`);
    const release = takeStreamSlot(slots, clientOf(c));
    if (typeof release !== "function") {
      c.header("Retry-After", "5");
      return c.json({ error: `Refused: ${release.refused}` }, 503);
    }
    const feed = sharedFeed(feeds, session.id, (signal) => terminalFeed(session, { sessionRoot: ctx.sessionRoot, signal }), c.req.raw.signal);
    return terminalEvents(c, feed, release);
  });
  app.notFound((c) => c.text("Not found\n", 404));
  app.onError((error, c) => {
    const status = error instanceof NotFound ? 404 : error instanceof PreconditionError ? 409 : 500;
    const message = redact(error instanceof NotFound || error instanceof PreconditionError ? error.message : `The dashboard failed: ${error.message.split("\n")[0]}`);
    if (status === 500) writeStderr(`robot-army serve: ${message}\n`);
    if (c.req.path.startsWith("/api/") || !accepts(c, "text/html")) return c.json({ error: message }, status);
    return c.html(errorPage(message, ctx), status);
  });
  return app;
}

/** What a read-only dashboard answers anything but a read, the login and the logout. */
async function readOnly(c: Context<WebEnv>, next: () => Promise<void>): Promise<Response | void> {
  if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.path === "/login" || c.req.path === "/logout") return await next();
  const message = "Refused: this dashboard is read-only (serve --read-only): it shows, and changes nothing";
  return accepts(c, "text/html") ? c.text(`${message}\n`, 403) : c.json({ error: message }, 403);
}

/** A page at its path (HTML, or its live parts) and its data at its API path; an action's answer on the page it came back to. */
function mountPage(app: Hono<WebEnv>, ctx: WebContext, page: AnyPage, answers: Answers): void {
  const readData = async (c: Context<WebEnv>) => {
    const request: PageRequest = { params: c.req.param() as Record<string, string>, query: new URL(c.req.url).searchParams };
    // Rows written before the redactor existed may hold a secret: it is caught on the way out too.
    return redactAll(await page.read(ctx, request));
  };
  app.get(page.api, async (c) => c.json({ ...freshness(ctx), ...(await readData(c)) }));
  app.get(page.path, async (c) => {
    // The log's newest id before the data: a change after it, the page hears of (changes.ts); one before, it shows.
    const store = await ctx.store();
    const logId = store ? lastAuditId(store) : 0;
    const data = await readData(c);
    const url = new URL(c.req.url);
    url.searchParams.delete("fragment");
    const said = answers.said(url.searchParams.get("said"));
    // A form comes back to the page as it was, not to the answer of the last action.
    url.searchParams.delete("said");
    const view = { csrf: c.get("csrf"), here: url.pathname + url.search, actions: !ctx.readOnly };
    const body = await page.render(data, view);
    const fresh = freshness(ctx);
    // The live parts, and the page's title in a header (dashboard.js sets it, so a tab's name follows the page).
    if (c.req.query("fragment") === "1") return c.html(html`${freshnessLine(fresh)}${body}`, 200, { "X-Page-Title": encodeURIComponent(page.title(data)), "X-Log-Id": String(logId) });
    return c.html(layout(page.title(data), page.nav, fresh, body, page.terminal ? ["terminal"] : [], said, { logId }));
  });
}

/** When the data was read and the daemon's verdict. */
const freshness = freshnessOf;

function accepts(c: Context<WebEnv>, type: string): boolean {
  return (c.req.header("Accept") ?? "").includes(type);
}

/** A whole number in a path, else a 404: the route names nothing. */
function itemId(text: string, what = "work item"): number {
  const id = wholeNumber(text);
  if (id === null) throw new NotFound(`No ${what} ${text}`);
  return id;
}

function errorPage(message: string, ctx: WebContext) {
  return layout("not done", null, freshness(ctx), html`<section class="error"><h1>Not done</h1><p class="why">${message}</p><p><a href="/">back to what needs you</a></p></section>`, [], undefined, { still: true });
}
