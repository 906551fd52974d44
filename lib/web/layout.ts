/**
 * The frame around every page: the navigation, the line saying when the data was read and
 * whether the daemon is alive (its health verdict), and the scripts that keep the page
 * current (static/dashboard.js: each part marked `data-live` is fetched again every few
 * seconds and replaced; not on a page marked still, an answer or an error at an address that
 * is no page). No inline script or style: the Content-Security-Policy allows
 * only the dashboard's own files.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { isoSeconds, now } from "../clock.ts";
import type { Health } from "../daemon/health.ts";
import type { WebContext } from "./context.ts";

/** The navigation, in order: its label and path. */
export const NAV: ReadonlyArray<readonly [string, string]> = [
  ["needs me", "/"], ["active", "/active"], ["queue", "/queue"], ["anomalies", "/anomalies"], ["log", "/log"],
];

/** When the data was read and the daemon's verdict. */
export interface Freshness {
  read_at: string;
  daemon: { verdict: Health["verdict"]; detail: string };
}

/** When the data was read and the daemon's verdict. */
export function freshnessOf(ctx: Pick<WebContext, "health">): Freshness {
  const health = ctx.health();
  return { read_at: isoSeconds(now()), daemon: { verdict: health.verdict, detail: health.detail } };
}

/** What an action answered (lib/web/actions.ts): the command's own lines, in the box a page shows them in. */
export function saidLines(said: { ok: boolean; lines: string[] }): HtmlEscapedString {
  return html`<pre class="said-lines ${said.ok ? "ok" : "refused"}">${said.lines.join("\n")}</pre>` as HtmlEscapedString;
}

/** The freshness line, live: it is replaced with every refresh. */
export function freshnessLine(f: Freshness): HtmlEscapedString {
  const good = f.daemon.verdict === "ok";
  return html`<p id="freshness" data-live class="${good ? "fresh" : "fresh alarm"}">read at <time>${f.read_at}</time> · daemon <strong>${f.daemon.verdict}</strong><span class="detail">${good ? "" : `: ${f.daemon.detail}`}</span></p>` as HtmlEscapedString;
}

/** A whole page: head, navigation (with `nav` marked), the freshness line and the body. */
export function layout(
  title: string, nav: string | null, freshness: Freshness, body: HtmlEscapedString | Promise<HtmlEscapedString>, extraScripts: string[] = [],
  said?: { ok: boolean; lines: string[] }, options: { still?: boolean; logId?: number } = {},
): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · robot-army</title>
<link rel="stylesheet" href="/static/dashboard.css">
${extraScripts.includes("terminal") ? html`<link rel="stylesheet" href="/static/xterm.css">` : ""}
</head>
<body>
<header>
<a class="brand" href="/">robot-army</a>
<nav>${NAV.map(([label, path]) => html`<a href="${path}"${label === nav ? html` aria-current="page"` : ""}>${label}</a>`)}</nav>
${freshnessLine(freshness)}
</header>
<main id="page"${options.still ? html` data-still` : ""}${options.logId !== undefined ? html` data-log-id="${String(options.logId)}"` : ""}>
<div id="said" role="status" aria-live="polite">${said ? saidLines(said) : ""}</div>
${body}
</main>
<script src="/static/dashboard.js"></script>
${extraScripts.includes("terminal") ? html`<script src="/static/xterm.js"></script><script src="/static/terminal.js"></script>` : ""}
</body>
</html>
`;
}
