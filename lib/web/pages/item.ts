/**
 * `/items/<id>`: one work item: its state and history (from the audit log), its sessions and
 * how each ended (one that ended within seconds of its start with its last output lines), its pull requests, its claim on GitHub (this host's, or who holds it), its cleanup state, its failure or its worker's question,
 * keep or release, the commands that apply to it for the owner to run, and the worker's
 * terminal, live and read-only: its latest session's output drawn by xterm.js as it writes
 * (static/terminal.js reads `/api/items/<id>/terminal`). No input is ever sent to a worker.
 */
import { html } from "hono/html";
import { keepOfItem } from "../../ending/keeps.ts";
import { itemReport } from "../../reports/item.ts";
import type { ItemReport } from "../../reports/item.ts";
import { getItem } from "../../work-items/queries.ts";
import { describeQuickExit } from "../../work-items/quick-exit.ts";
import type { WorkItemState } from "../../work-items/queries.ts";
import type { WebContext } from "../context.ts";
import { NotFound, wholeNumber } from "../page.ts";
import type { Page } from "../page.ts";
import { command, issueLink, none, postButton, safeUrl } from "./_parts.ts";

/** The page's data: the item's report, its keep, the commands that apply, and where its terminal streams from. */
export interface ItemPage {
  item: ItemReport;
  keep: { placed_at: string } | null;
  /** Whether a keep would take: the item is not finished, or its current session is still open. */
  keepable: boolean;
  commands: Array<{ command: string; does: string }>;
  /** The latest session's terminal (null: the item never had a session). */
  terminal: { session: string; open: boolean; stream: string } | null;
}

export const itemPage: Page<ItemPage> = {
  path: "/items/:id",
  api: "/api/items/:id",
  nav: null,
  terminal: true,
  title: (data) => `item ${data.item.id} · ${data.item.repo}#${data.item.issue}`,
  async read(ctx: WebContext, request): Promise<ItemPage> {
    const text = request.params.id;
    const store = await ctx.store();
    const id = wholeNumber(text);
    const item = id !== null && store ? getItem(store, id) : undefined;
    if (!item || !store) throw new NotFound(`No work item ${text}`);
    const report = itemReport(store, ctx.config, item);
    const keep = keepOfItem(store, item.id);
    const latest = report.sessions.at(-1);
    return {
      item: report,
      keep: keep ? { placed_at: keep.placed_at } : null,
      keepable: item.state !== "abandoned" && (item.state !== "done" || latest?.ended_at === null),
      commands: commandsFor(item.id, item.state, latest !== undefined && latest.ended_at === null),
      terminal: latest ? { session: latest.name, open: latest.ended_at === null, stream: `/api/items/${item.id}/terminal` } : null,
    };
  },
  render(data, view) {
    const i = data.item;
    return html`<h1>Item ${String(i.id)} · ${issueLink(i, i.url)}${i.simulated ? html` <span class="simulated">simulated: made below the live effect level</span>` : ""}</h1>
<p class="title-line">${i.title}</p>
<section id="item-state" data-live>
<dl class="facts">
<dt>state</dt><dd><span class="state ${i.state}">${i.state}</span> since <time>${i.updated_at}</time>${i.reason && i.state !== "failed" && i.state !== "needs_info" ? html` <span class="reason">(${i.reason})</span>` : ""}</dd>
${i.failure !== null ? html`<dt>failure</dt><dd class="failure">${i.failure}</dd>` : ""}
${i.needs_info ? html`<dt>asks</dt><dd class="asks">${i.needs_info.question} ${command(i.needs_info.answer)}</dd>` : ""}
<dt>author</dt><dd>${i.author}</dd>
<dt>labels</dt><dd>${i.labels.length ? i.labels.join(", ") : "none"}</dd>
<dt>keep</dt><dd>${data.keep ? html`kept since <time>${data.keep.placed_at}</time> ${postButton(`/items/${i.id}/unkeep`, "release", view)}` : data.keepable ? html`not kept ${postButton(`/items/${i.id}/keep`, "keep", view)}` : "not kept"}</dd>
${i.claim ? html`<dt>claim</dt><dd>${!i.claim.mine ? html`held by ${i.claim.host ?? "a claim that names no host"} on GitHub, seen <time>${i.claim.seen_at}</time>: nothing starts here while it stands ${command(`robot-army unclaim ${i.id}`)}` : i.claim.released_at ? html`released on GitHub <time>${i.claim.released_at}</time>` : html`held by this host on GitHub since <time>${i.claim.seen_at}</time>`} <code>${i.claim.ref}</code></dd>` : ""}
<dt>cleanup</dt><dd>${i.cleanup ? html`${i.cleanup.state}, <time>${i.cleanup.at}</time>: ${i.cleanup.reason}${i.cleanup.restorable && i.cleanup.restore ? html` ${command(i.cleanup.restore)}` : ""}` : "not decided"}</dd>
</dl>
<h2>What you can run</h2>
${data.commands.length ? html`<ul class="commands">${data.commands.map((c) => html`<li>${command(c.command)} <span>${c.does}</span></li>`)}</ul>` : none("Nothing: the item is finished.")}
</section>
<section id="terminal-section">
<h2>Terminal${data.terminal ? html` · <code>${data.terminal.session}</code>${data.terminal.open ? "" : html` <span class="none">(ended)</span>`}` : ""}</h2>
${data.terminal ? html`<p class="note" data-terminal-note role="status" aria-live="polite"></p><div id="terminal" data-stream="${data.terminal.stream}"></div><p class="none">read-only: nothing typed here reaches the worker; ${command(`robot-army attach ${i.id}`)} opens it</p>` : none("No session yet.")}
</section>
<section id="item-history" data-live>
<h2>Sessions</h2>
${i.sessions.length ? html`<table><thead><tr><th>attempt</th><th>session</th><th>host</th><th>started</th><th>ended</th></tr></thead><tbody>${i.sessions.map((s) => html`<tr><td>${String(s.attempt)}</td><td><code>${s.name}</code></td><td>${s.host} via ${s.launcher}</td><td><time>${s.started_at}</time></td><td>${s.ended_at ? html`<time>${s.ended_at}</time> ${s.end_reason}${s.exit_code !== null ? ` (exit ${s.exit_code})` : ""}` : "open"}</td></tr>${s.quick_exit ? html`<tr class="quick-exit"><td></td><td colspan="4"><p>quick exit: ${describeQuickExit(s.quick_exit)}</p>${s.quick_exit.last_lines.length ? html`<pre class="last-lines">${s.quick_exit.last_lines.join("\n")}</pre>` : ""}</td></tr>` : ""}`)}</tbody></table>` : none("none")}
<h2>Pull requests</h2>
${i.pull_requests === "not checked" ? none("not checked") : i.pull_requests.length === 0 ? none("none") : html`<ul>${i.pull_requests.map((p) => {
      const url = safeUrl(p.html_url);
      const label = `#${p.number}`;
      return html`<li>${url ? html`<a href="${url}" rel="noreferrer noopener">${label}</a>` : label} ${p.merged_at ? html`merged <time>${p.merged_at}</time>` : p.state === "open" ? "open" : "closed unmerged"} · ${p.head_branch}</li>`;
    })}</ul>`}
<h2>History</h2>
${i.history.length ? html`<ol class="history">${i.history.map((h) => html`<li><time>${h.at}</time> ${h.from ?? "(new)"} → <strong>${h.to}</strong>${h.reason ? html` <span class="reason">${h.reason}</span>` : ""}</li>`)}</ol>` : none("none recorded")}
</section>`;
  },
};

/** The verbs that apply to an item in `state`, with what each does. */
function commandsFor(id: number, state: WorkItemState, open: boolean): Array<{ command: string; does: string }> {
  const verb = (name: string, does: string) => ({ command: `robot-army ${name} ${id}`, does });
  const list: Array<{ command: string; does: string }> = [];
  if (open) list.push(verb("attach", "opens its worker where its launcher put it"));
  if (state === "interrupted" || state === "awaiting_review") {
    list.push(verb("resume", "a new session in its worktree, the worker's context restored"), verb("restart", "a fresh session in its worktree"));
  }
  if (state === "failed") list.push(verb("retry", "puts it back in the queue"));
  if (state === "interrupted" || state === "failed") list.push(verb("reset", "discards its unfinished worktree and branch, back to the queue"));
  if (open) list.push(verb("cancel", "stops its session, after you confirm"));
  if (state !== "done" && state !== "abandoned") list.push(verb("abandon", "gives up on it for good"));
  return list;
}
