/**
 * `/items/<id>`: one work item: its state and history (from the audit log), its sessions and
 * how each ended (one that ended within seconds of its start with its last output lines), its pull requests, its claim on GitHub (this host's, or who holds it), its cleanup state, its failure or its worker's question,
 * what an interrupted or failed item is decided by (lib/reports/decision.ts), the owner's verbs
 * that apply to it as buttons beside their commands (keep or release, resume, restart, retry,
 * reset, cancel, abandon, hold; those that could lose work through their confirmation), and the
 * worker's terminal: its latest session's output drawn by xterm.js as it writes
 * (static/terminal.js reads `/api/items/<id>/terminal`), with a box that types a line into an
 * interactive worker's window as `robot-army send` does (the only way anything reaches a worker
 * from here).
 */
import { html, raw } from "hono/html";
import { keepOfItem } from "../../ending/keeps.ts";
import { listHolds } from "../../dispatch/controls.ts";
import { SEND_LIMIT } from "../../dispatch/verbs/send.ts";
import { adviceOf, decisionOf, DECIDING_STATES, describeEnding } from "../../reports/decision.ts";
import type { Decision } from "../../reports/decision.ts";
import { feedbackState, itemReport } from "../../reports/item.ts";
import type { ItemReport } from "../../reports/item.ts";
import { getItem } from "../../work-items/queries.ts";
import { describeQuickExit } from "../../work-items/quick-exit.ts";
import type { WorkItemState } from "../../work-items/queries.ts";
import type { WebContext } from "../context.ts";
import { NotFound, wholeNumber } from "../page.ts";
import type { Page, View } from "../page.ts";
import { command, commandButton, issueLink, none, postButton, safeUrl } from "./_parts.ts";

/** The page's data: the item's report, its keep, the commands that apply, and where its terminal streams from. */
export interface ItemPage {
  item: ItemReport;
  keep: { placed_at: string } | null;
  /** Whether a keep would take: the item is not finished, or its current session is still open. */
  keepable: boolean;
  commands: Array<{ command: string; does: string }>;
  /** The latest session's terminal (null: the item never had a session); `send` when a line can be typed into it (open, interactive, on this host). */
  terminal: { session: string; open: boolean; stream: string; send: boolean } | null;
  /** What an interrupted or failed item is decided by; null in any other state. */
  decision: (Decision & { advice: string }) | null;
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
    const holds = listHolds(store);
    const held = { item: holds.some((h) => h.item === item.id), repo: holds.some((h) => h.item === null && h.repo === item.repo) };
    const decision = DECIDING_STATES.has(item.state) ? await decisionOf(store, ctx.config, report, ctx.stateDir) : null;
    const open = latest !== undefined && latest.ended_at === null;
    return {
      item: report,
      keep: keep ? { placed_at: keep.placed_at } : null,
      keepable: item.state !== "abandoned" && (item.state !== "done" || latest?.ended_at === null),
      commands: commandsFor(item.id, item.repo, item.state, open, held),
      terminal: latest ? { session: latest.name, open, stream: `/api/items/${item.id}/terminal`, send: open && latest.launcher !== "process" } : null,
      decision: decision && { ...decision, advice: adviceOf(decision) },
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
${data.decision ? decisionSection(data.decision) : ""}
<h2>What you can do</h2>
${data.commands.length ? html`<ul class="commands">${data.commands.map((c) => html`<li>${commandButton(c.command, view)}${command(c.command)} <span>${c.does}</span></li>`)}</ul>` : none("Nothing: the item is finished.")}
</section>
<section id="terminal-section">
<h2>Terminal${data.terminal ? html` · <code>${data.terminal.session}</code>${data.terminal.open ? "" : html` <span class="none">(ended)</span>`}` : ""}</h2>
${data.terminal ? html`<p class="note" data-terminal-note role="status" aria-live="polite"></p><div id="terminal" data-stream="${data.terminal.stream}"></div>${data.terminal.send && view.actions ? sendBox(i.id, view) : ""}<p class="none">the terminal shows what the worker writes; ${data.terminal.send ? "the box above types one line at its prompt, as " : ""}${command(data.terminal.send ? `robot-army send ${i.id} TEXT` : `robot-army attach ${i.id}`)}${data.terminal.send ? html` does; ${command(`robot-army attach ${i.id}`)} opens it` : " opens it"}</p>` : none("No session yet.")}
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
<h2>Feedback</h2>
${i.feedback.length ? html`<ul class="feedback">${i.feedback.map((f) => {
      const url = safeUrl(f.url);
      return html`<li><time>${f.created_at}</time> @${f.author} ${url ? html`<a href="${url}" rel="noreferrer noopener">${f.what}</a>` : f.what} <span class="reason">${feedbackState(f)}</span>${f.body.trim() ? html`<blockquote>${f.body.length > 600 ? `${f.body.slice(0, 599)}…` : f.body}</blockquote>` : ""}</li>`;
    })}</ul>` : none("none from the owner or a listed reviewer")}
<h2>History</h2>
${i.history.length ? html`<ol class="history">${i.history.map((h) => html`<li><time>${h.at}</time> ${h.from ?? "(new)"} → <strong>${h.to}</strong>${h.reason ? html` <span class="reason">${h.reason}</span>` : ""}</li>`)}</ol>` : none("none recorded")}
</section>`;
  },
};

/** What an interrupted or failed item is decided by: how it ended, its worktree, its pull request, when it last worked. */
function decisionSection(d: NonNullable<ItemPage["decision"]>) {
  return html`<h2>What to decide by</h2>
<dl class="facts decision">
${d.ended ? html`<dt>ended</dt><dd>${describeEnding(d.ended)}${d.ended.last_lines.length ? html`<pre class="last-lines">${d.ended.last_lines.join("\n")}</pre>` : ""}</dd>` : ""}
<dt>worktree</dt><dd>${d.work ? html`${d.work.lines.map((line) => html`<span class="work-line">${line}</span>`)}` : "none"}</dd>
<dt>pull request</dt><dd>${d.pull_request ? html`${safeUrl(d.pull_request.url) ? html`<a href="${safeUrl(d.pull_request.url)!}" rel="noreferrer noopener">#${String(d.pull_request.number)}</a>` : `#${d.pull_request.number}`} open` : "none open"}</dd>
<dt>last worked</dt><dd>${d.last_worked_at ? html`<time>${d.last_worked_at}</time>` : "never, as far as is recorded"}</dd>
<dt>choices</dt><dd>${d.advice}</dd>
</dl>`;
}

/** The box that types one line into the worker's window, as `robot-army send` does (outside the live parts: a refresh never clears what is being typed). */
function sendBox(id: number, view: View) {
  const field = raw(`<input type="text" name="text" maxlength="${SEND_LIMIT}" required autocomplete="off" aria-label="a line to type at the worker's prompt" placeholder="answer the worker">`);
  return html`<div class="send">${postButton(`/items/${id}/send`, "send", view, "", field)}</div>`;
}

/** The verbs that apply to an item in `state`, with what each does. */
function commandsFor(id: number, repo: string, state: WorkItemState, open: boolean, held: { item: boolean; repo: boolean }): Array<{ command: string; does: string }> {
  const verb = (name: string, does: string) => ({ command: `robot-army ${name} ${id}`, does });
  const list: Array<{ command: string; does: string }> = [];
  if (open) list.push(verb("attach", "opens its worker where its launcher put it"));
  if (state === "interrupted" || state === "awaiting_review") {
    list.push(verb("resume", "a new session in its worktree, the worker's context restored"), verb("restart", "a fresh session in its worktree"));
  }
  if (state === "failed") list.push(verb("retry", "puts it back in the queue"));
  if (state === "interrupted" || state === "failed") list.push(verb("reset", "discards its unfinished worktree and branch, back to the queue"));
  if (open) list.push(verb("cancel", "stops its session, after you confirm"));
  if (state !== "done" && state !== "abandoned") {
    list.push(verb("abandon", "gives up on it for good"));
    list.push(held.item ? verb("unhold", "lets dispatch start it again") : verb("hold", "keeps dispatch from starting it"));
    list.push(held.repo
      ? { command: `robot-army unhold --repo ${repo}`, does: `lets dispatch start ${repo}'s items again` }
      : { command: `robot-army hold --repo ${repo}`, does: `keeps dispatch from starting any of ${repo}'s items` });
  }
  return list;
}
