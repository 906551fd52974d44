/**
 * `/anomalies`: the conditions the owner should see (an orphan session, an effect a crash
 * cut short, a worktree no item claims, ...), open ones with an acknowledge button (the same
 * acknowledgement as `robot-army anomalies --acknowledge <id>`, audited as it is); `?all=1` shows the
 * acknowledged and resolved ones too.
 */
import { html } from "hono/html";
import { listAnomalies } from "../../store/anomalies.ts";
import type { Anomaly } from "../../store/anomalies.ts";
import type { WebContext } from "../context.ts";
import type { Page } from "../page.ts";
import { none, postButton } from "./_parts.ts";

/** The page's data. */
export interface Anomalies {
  all: boolean;
  anomalies: Anomaly[];
}

export const anomaliesPage: Page<Anomalies> = {
  path: "/anomalies",
  api: "/api/anomalies",
  nav: "anomalies",
  title: (data) => `${data.anomalies.filter(isOpen).length} open anomalies`,
  async read(ctx: WebContext, request): Promise<Anomalies> {
    const store = await ctx.store();
    const all = request.query.get("all") === "1";
    return { all, anomalies: store ? listAnomalies(store, all ? {} : { open: true }) : [] };
  },
  render(data, view) {
    return html`<h1>Anomalies</h1>
<p>${data.all ? html`All anomalies. <a href="/anomalies">Only open ones</a>` : html`Open anomalies. <a href="/anomalies?all=1">All, with the acknowledged and resolved</a>`}</p>
<div id="anomalies-body" data-live>${data.anomalies.length === 0 ? none(data.all ? "No anomaly was ever raised." : "No open anomaly.") : html`<table id="anomalies"><thead><tr><th>id</th><th>kind</th><th>about</th><th>detail</th><th>raised</th><th></th></tr></thead><tbody>${data.anomalies.map((a) => html`<tr data-anomaly="${String(a.id)}">
<td>${String(a.id)}</td><td>${a.kind}</td><td>${a.item !== null ? html`<a href="/items/${String(a.item)}">item ${String(a.item)}</a>` : a.repo ?? ""}</td><td class="detail">${a.detail}</td><td><time>${a.raised_at}</time></td>
<td>${isOpen(a) ? postButton(`/anomalies/${a.id}/acknowledge`, "acknowledge", view) : a.resolution ? html`${a.resolution} <time>${a.resolved_at ?? ""}</time>` : html`acknowledged <time>${a.acknowledged_at ?? ""}</time>`}</td></tr>`)}</tbody></table>`}</div>`;
  },
};

function isOpen(a: Anomaly): boolean {
  return a.acknowledged_at === null && a.resolved_at === null;
}
