/**
 * `/items/<id>/confirm/<verb>`: the owner's confirmation of a verb that stops a worker or could
 * lose work (lib/web/verbs.ts CONFIRMED: cancel, abandon, reset, restart), on its own page: what
 * the verb does, and what the item's worktree holds that it could lose (uncommitted files,
 * commits origin does not have: lib/reports/decision.ts), then the one button that acts, which
 * carries the confirmation (`confirm` = the item's id) the action requires. No page here acts:
 * it is a GET.
 */
import type { Hono } from "hono";
import { html, raw } from "hono/html";
import { decisionOf, describeEnding } from "../../reports/decision.ts";
import { itemReport } from "../../reports/item.ts";
import { getItem } from "../../work-items/queries.ts";
import type { WebContext, WebEnv } from "../context.ts";
import { freshnessOf, layout } from "../layout.ts";
import { localPath, NotFound, wholeNumber } from "../page.ts";
import { issueLink, postButton } from "./_parts.ts";
import { CONFIRMED, isItemVerb } from "../verbs.ts";

/** Mounts the confirmation pages. */
export function confirmRoutes(app: Hono<WebEnv>, ctx: WebContext): void {
  app.get("/items/:id/confirm/:verb", async (c) => {
    const id = wholeNumber(c.req.param("id"));
    const verb = c.req.param("verb");
    const store = await ctx.store();
    const item = id !== null && store ? getItem(store, id) : undefined;
    if (!item || !store || !isItemVerb(verb) || !CONFIRMED[verb]) throw new NotFound(`No confirmation of "${verb}" for work item ${c.req.param("id")}`);
    const report = itemReport(store, ctx.config, item);
    const decision = await decisionOf(store, ctx.config, report, ctx.stateDir);
    const back = localPath(c.req.query("back") ?? `/items/${item.id}`);
    const latest = report.sessions.at(-1);
    const view = { csrf: c.get("csrf"), here: back, actions: !ctx.readOnly };
    const reason = verb === "abandon" ? `<label class="reason">why (kept on the item) <input type="text" name="reason" maxlength="500" autocomplete="off"></label>` : "";
    // Only the item's id goes in: a whole number, nothing to escape.
    const fields = raw(`<input type="hidden" name="confirm" value="${item.id}">${reason}`);
    const work = decision.work;
    const body = html`<section class="confirm">
<h1>${verb} item ${String(item.id)}?</h1>
<p class="title-line">${issueLink(item, report.url)} ${item.title} · <span class="state ${item.state}">${item.state}</span></p>
<p class="does">${verb} ${CONFIRMED[verb]}.</p>
${verb === "cancel" && latest && latest.ended_at === null ? html`<p>Its session: <code>${latest.name}</code>, started <time>${latest.started_at}</time>.</p>` : ""}
<h2>What its worktree holds now</h2>
${work ? html`<ul class="work">${work.lines.map((line) => html`<li>${line}</li>`)}</ul>` : html`<p class="none">It never had a worktree.</p>`}
${decision.ended ? html`<p class="ended">Its worker ${describeEnding(decision.ended)}.</p>` : ""}
${decision.pull_request ? html`<p>Its pull request #${String(decision.pull_request.number)} is open.</p>` : ""}
<p class="do">${postButton(`/items/${item.id}/${verb}`, `yes, ${verb} item ${item.id}`, view, "danger", fields)} <a class="button" href="${back}">no, go back</a></p>
</section>`;
    return c.html(layout(`${verb} item ${item.id}?`, null, freshnessOf(ctx), body));
  });
}
