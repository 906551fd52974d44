/**
 * `/log`: the audit log, newest first, a page of 50 records at a time (`?before=<id>` goes
 * further back), filtered by kind (a kind or the kinds under it, as `robot-army log --kind`)
 * and by item. Records made below the live effect level are left out unless `?simulated=1`.
 * The daemon's passes that changed nothing, two or more in a row, are one row; `/api/log` has each.
 */
import { html } from "hono/html";
import { queryAudit } from "../../store/audit.ts";
import type { AuditRecord } from "../../store/audit.ts";
import type { WebContext } from "../context.ts";
import { wholeNumber } from "../page.ts";
import type { Page } from "../page.ts";
import { none } from "./_parts.ts";
import { describeQuiet, foldQuietPasses } from "../../reports/quiet-passes.ts";

/** Records on one page. */
export const LOG_PAGE_SIZE = 50;

/** The page's data: the filter as understood, the records (newest first), and where the next page starts. */
export interface Log {
  filter: { kind: string | null; item: number | null; simulated: boolean; before: number | null };
  records: AuditRecord[];
  /** The `before` of the page further back, or null when this page reaches the first record. */
  older: number | null;
}

/** A body longer than this is folded to its start, the whole of it a tap away: a page of long bodies stays short on a phone. */
export const BODY_SHOWN = 120;

/** A record's body: whole when short, else its start with the whole under a <details>. */
function bodyCell(body: string) {
  if (body.length <= BODY_SHOWN) return html`<code>${body}</code>`;
  return html`<details><summary><code>${body.slice(0, BODY_SHOWN)}…</code></summary><code>${body}</code></details>`;
}

/** A run of the daemon's passes that changed nothing, newest first: one row (lib/reports/quiet-passes.ts; /api/log has each). */
function quietRow(run: AuditRecord[]) {
  const [newest, oldest] = [run[0], run.at(-1)!];
  return html`<tr data-record="${String(newest.id)}" class="fact quiet">
<td>${String(oldest.id)}-${String(newest.id)}</td><td><time>${newest.at}</time></td><td>fact</td><td>reconcile.pass</td><td></td><td></td>
<td class="body">${describeQuiet(run)}, since <time>${oldest.at}</time></td></tr>`;
}

export const logPage: Page<Log> = {
  path: "/log",
  api: "/api/log",
  nav: "log",
  title: () => "audit log",
  async read(ctx: WebContext, request): Promise<Log> {
    const q = request.query;
    const whole = (name: string) => wholeNumber(q.get(name));
    const kind = q.get("kind")?.trim() || null;
    const filter = { kind, item: whole("item"), simulated: q.get("simulated") === "1", before: whole("before") };
    const store = await ctx.store();
    const page = store ? queryAudit(store, {
      kind: filter.kind ?? undefined, item: filter.item ?? undefined, beforeId: filter.before ?? undefined,
      ...(filter.simulated ? {} : { simulated: false }), limit: LOG_PAGE_SIZE + 1,
    }).reverse() : [];
    const records = page.slice(0, LOG_PAGE_SIZE);
    return { filter, records, older: page.length > LOG_PAGE_SIZE ? records.at(-1)!.id : null };
  },
  render(data) {
    const f = data.filter;
    const next = new URLSearchParams();
    if (f.kind) next.set("kind", f.kind);
    if (f.item !== null) next.set("item", String(f.item));
    if (f.simulated) next.set("simulated", "1");
    if (data.older !== null) next.set("before", String(data.older));
    return html`<h1>Audit log</h1>
<form method="get" action="/log" class="filter">
<label>kind <input name="kind" value="${f.kind ?? ""}" placeholder="state, notification.send"></label>
<label>item <input name="item" value="${f.item !== null ? String(f.item) : ""}" inputmode="numeric" size="6"></label>
<label><input type="checkbox" name="simulated" value="1"${f.simulated ? html` checked` : ""}> simulated too</label>
<button type="submit">filter</button>
</form>
<div id="log-body"${f.before === null ? html` data-live` : ""}>${data.records.length === 0 ? none("No audit records match.") : html`<table id="log"><thead><tr><th>id</th><th>at</th><th>phase</th><th>kind</th><th>about</th><th>action</th><th>body</th></tr></thead><tbody>${foldQuietPasses(data.records).map((entry) => "quiet" in entry ? quietRow(entry.quiet) : html`<tr data-record="${String(entry.record.id)}" class="${entry.record.phase}">
<td>${String(entry.record.id)}</td><td><time>${entry.record.at}</time></td><td>${entry.record.phase}</td><td>${entry.record.kind}</td>
<td>${entry.record.item !== null ? html`<a href="/items/${String(entry.record.item)}">item ${String(entry.record.item)}</a>` : ""} ${entry.record.repo ?? ""}</td>
<td>${entry.record.actionId ? html`<code title="${entry.record.actionId}">${entry.record.actionId.slice(0, 8)}</code>` : ""}</td><td class="body">${bodyCell(JSON.stringify(entry.record.body))}${entry.record.simulated ? html` <span class="none">(simulated)</span>` : ""}</td></tr>`)}</tbody></table>`}
${data.older !== null ? html`<p><a class="older" href="/log?${next.toString()}">older records</a></p>` : ""}</div>`;
  },
};
