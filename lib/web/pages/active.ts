/**
 * `/active`: one row per open worker session: its item and issue (linked), host, session
 * name, whether its worker is idle or busy and for how long (from the worker's registry;
 * unknown shown as unknown, never as either), its pull request and that one's state, and a
 * keep button; the capacity the sessions use; then every keep in force with its release
 * button, a keep with no live session among them.
 */
import { html } from "hono/html";
import { now } from "../../clock.ts";
import { workerActivity } from "../../work-items/idleness.ts";
import type { Activity } from "../../work-items/idleness.ts";
import { listKeeps } from "../../ending/keeps.ts";
import { pullRequestsOfItems } from "../../intake/pull-requests.ts";
import { issueUrls } from "../../reports/item.ts";
import { itemsById } from "../../work-items/queries.ts";
import { sessionsOfItemsWithOneOpen } from "../../work-items/sessions.ts";
import type { WebContext } from "../context.ts";
import type { Page } from "../page.ts";
import { formatAge } from "../../duration.ts";
import { issueLink, itemLink, none, postButton } from "./_parts.ts";
import type { ItemName } from "./_parts.ts";

/** One open session. */
export interface ActiveRow {
  item: ItemName & { state: string; url: string | null };
  session: { id: string; name: string; host: string; launcher: string; attempt: number; started_at: string };
  activity: Activity;
  pull_request: { number: number; state: "open" | "merged" | "closed"; html_url: string } | null;
  kept: boolean;
}

/** One keep in force. */
export interface KeptRow {
  item: ItemName & { state: string };
  placed_at: string;
  /** The live session it covers, or null: it holds nothing now. */
  session: string | null;
}

/** The page's data. */
export interface Active {
  sessions: ActiveRow[];
  capacity: { open: number; max: number; repos: Array<{ repo: string; open: number; max: number }> };
  kept: KeptRow[];
}

export const activePage: Page<Active> = {
  path: "/active",
  api: "/api/active",
  nav: "active",
  title: (data) => `${data.sessions.length} active`,
  async read(ctx: WebContext): Promise<Active> {
    const store = await ctx.store();
    const max = ctx.config.daemon.max_concurrent_sessions;
    const repoMax = (repo: string) => ctx.config.repos[repo]?.max_sessions ?? ctx.config.worker.max_sessions;
    if (!store) return { sessions: [], capacity: { open: 0, max, repos: [] }, kept: [] };
    const keeps = listKeeps(store);
    // A keep covers its item's current session only (keptSession): an earlier attempt's open row is not kept.
    const keptSessions = new Set(keeps.flatMap((k) => (k.session ? [k.session.id] : [])));
    const at = now();
    // Each row's item and sessions, read for all the rows at once; the open rows by item and attempt.
    const sessionsByItem = sessionsOfItemsWithOneOpen(store);
    const open = [...sessionsByItem.values()].flatMap((rows) => rows.filter((s) => s.ended_at === null && !s.simulated));
    const items = itemsById(store, [...open.map((s) => s.item), ...keeps.map((k) => k.item)]);
    const rowItems = [...new Set(open.map((s) => s.item))].flatMap((id) => items.get(id) ?? []);
    const pullsByItem = pullRequestsOfItems(store, rowItems.map((item) => ({ item, sessions: sessionsByItem.get(item.id) ?? [] })));
    const urls = issueUrls(store, rowItems, ctx.config.github.api_base);
    const rows: ActiveRow[] = [];
    // One row after another: each registry is a file read, and 200 read at once only hold more in memory together.
    for (const s of open) {
      const item = items.get(s.item);
      if (!item) continue;
      const pulls = pullsByItem.get(item.id) ?? "not checked";
      const pull = pulls === "not checked" ? undefined : pulls.at(-1);
      rows.push({
        item: { id: item.id, repo: item.repo, issue: item.issue, title: item.title, state: item.state, url: urls.get(item.id) ?? null },
        session: { id: s.id, name: s.name, host: s.host, launcher: s.launcher, attempt: s.attempt, started_at: s.started_at },
        activity: await workerActivity(s, s.profile ?? ctx.config.worker.profile, at),
        pull_request: pull ? { number: pull.number, state: pull.merged_at ? "merged" : pull.state === "open" ? "open" : "closed", html_url: pull.html_url } : null,
        kept: keptSessions.has(s.id),
      });
    }
    const perRepo = new Map<string, number>();
    for (const r of rows) perRepo.set(r.item.repo, (perRepo.get(r.item.repo) ?? 0) + 1);
    return {
      sessions: rows,
      capacity: { open: rows.length, max, repos: [...perRepo].sort(([a], [b]) => a.localeCompare(b)).map(([repo, n]) => ({ repo, open: n, max: repoMax(repo) })) },
      kept: keeps.map((k) => ({
        item: { id: k.item, repo: k.repo, issue: k.issue, title: items.get(k.item)?.title ?? "", state: k.state },
        placed_at: k.placed_at,
        session: k.session?.name ?? null,
      })),
    };
  },
  render(data, view) {
    const c = data.capacity;
    return html`<h1>Active sessions</h1>
<p id="capacity" data-live class="capacity">${String(c.open)} of ${String(c.max)} sessions${c.repos.map((r) => html` · ${r.repo} ${String(r.open)} of ${String(r.max)}`)}</p>
<div id="active-sessions" data-live>${data.sessions.length === 0 ? none("No worker session is open.") : html`<table id="active">
<thead><tr><th>item</th><th>issue</th><th>host</th><th>session</th><th>worker</th><th>pull request</th><th></th></tr></thead>
<tbody>${data.sessions.map((r) => html`<tr data-item="${String(r.item.id)}">
<td>${itemLink(r.item)}</td>
<td>${issueLink(r.item, r.item.url)}</td>
<td>${r.session.host}</td>
<td><code>${r.session.name}</code></td>
<td>${activityCell(r.activity)}</td>
<td>${r.pull_request ? html`#${String(r.pull_request.number)} <span class="pr ${r.pull_request.state}">${r.pull_request.state}</span>` : html`<span class="none">none</span>`}</td>
<td>${r.kept ? html`<span class="kept">kept</span>` : postButton(`/items/${r.item.id}/keep`, "keep", view)}</td>
</tr>`)}</tbody></table>`}</div>
<section id="kept" data-live>
<h2>Kept</h2>
${data.kept.length === 0 ? none("No keeps.") : html`<table><thead><tr><th>item</th><th>state</th><th>since</th><th>covers</th><th></th></tr></thead>
<tbody>${data.kept.map((k) => html`<tr data-item="${String(k.item.id)}">
<td>${itemLink(k.item)} <span class="ref">${k.item.repo}#${k.item.issue}</span></td>
<td>${k.item.state}</td>
<td><time>${k.placed_at}</time></td>
<td>${k.session ? html`<code>${k.session}</code>` : html`<span class="none">no live session: it holds nothing</span>`}</td>
<td>${postButton(`/items/${k.item.id}/unkeep`, "release", view)}</td>
</tr>`)}</tbody></table>`}
</section>`;
  },
};

function activityCell(a: Activity) {
  if (a.status === "unknown") return html`<span class="activity unknown" title="${a.why}">unknown</span>`;
  const label = a.status === "needs_info" ? "asks you" : a.status;
  return html`<span class="activity ${a.status}">${label}</span>${a.seconds !== null ? html` for ${formatAge(a.seconds * 1000)}` : ""}`;
}
