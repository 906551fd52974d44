/**
 * `/queue`: the ready items in the order dispatch takes them (lib/dispatch/queue.ts decides for
 * this page and for `status`), the pause while it is set, and apart from the queue the items
 * held by the owner, held for the owner's approval, and those whose repository is not trusted
 * here, each with why and the command that lets it go.
 */
import { html } from "hono/html";
import { statusReport } from "../../reports/status.ts";
import type { StatusReport } from "../../reports/status.ts";
import type { WebContext } from "../context.ts";
import type { Page } from "../page.ts";
import { command, itemLink, none } from "./_parts.ts";
import { remedyOf } from "../../reports/needs-you.ts";

/** The page's data: the queue and what stands apart from it, as `status --json` gives them. */
export type Queue = Pick<StatusReport, "paused" | "queue" | "held" | "held_for_owner" | "untrusted" | "claimed_elsewhere" | "blocked">;

export const queuePage: Page<Queue> = {
  path: "/queue",
  api: "/api/queue",
  nav: "queue",
  title: (data) => `queue: ${data.queue.length} ready`,
  async read(ctx: WebContext): Promise<Queue> {
    const { paused, queue, held, held_for_owner, untrusted, claimed_elsewhere, blocked } = statusReport(await ctx.store(), ctx.config, false, ctx.stateDir);
    return { paused, queue, held, held_for_owner, untrusted, claimed_elsewhere, blocked };
  },
  render(data) {
    return html`<h1>Queue</h1>
<div id="queue-body" data-live>
${data.paused ? html`<p class="paused">Paused since <time>${data.paused.since}</time>${data.paused.reason ? `: ${data.paused.reason}` : ""}; nothing is dispatched until ${command("robot-army unpause")}</p>` : ""}
${data.queue.length === 0 ? none("No ready item waits.") : html`<table id="queue"><thead><tr><th>#</th><th>item</th><th>issue</th><th>priority</th><th>since</th></tr></thead><tbody>${data.queue.map((q) => html`<tr data-item="${String(q.id)}"><td>${String(q.position)}</td><td>${itemLink(q)}</td><td>${q.repo}#${String(q.issue)}</td><td>${String(q.priority)}</td><td><time>${q.created_at}</time></td></tr>`)}</tbody></table>`}
${apart("Held by you", data.held.map((h) => ({ item: h, why: `${h.hold.on === "repository" ? "repository " : ""}held${h.hold.reason ? `: ${h.hold.reason}` : ""}`, command: h.unhold })))}
${apart("Held for your approval", data.held_for_owner.map((h) => ({ item: h, why: h.reason, command: `robot-army show ${h.id}` })))}
${apart("Waiting for other issues", data.blocked.map((b) => ({ item: b, why: b.reason, command: null })))}
${apart("Claimed by another host", data.claimed_elsewhere.map((c) => ({ item: c, why: c.reason, command: null })))}
${apart("Repository not trusted here", data.untrusted.map((u) => {
      const remedy = remedyOf(u.remedy);
      return "command" in remedy ? { item: u, why: `${u.repo} ${u.reason}`, command: remedy.command } : { item: u, why: `${u.repo} ${u.reason}: ${remedy.step}`, command: null };
    }))}
</div>`;
  },
};

function apart(heading: string, rows: Array<{ item: { id: number; repo: string; issue: number; title: string }; why: string; command: string | null }>) {
  if (!rows.length) return "";
  return html`<h2>${heading}</h2><table><tbody>${rows.map((r) => html`<tr data-item="${String(r.item.id)}"><td>${itemLink(r.item)}</td><td>${r.item.repo}#${String(r.item.issue)}</td><td>${r.why}</td><td>${r.command ? command(r.command) : ""}</td></tr>`)}</tbody></table>`;
}
