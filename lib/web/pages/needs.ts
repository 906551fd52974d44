/**
 * `/`, what needs the owner: failed items with why, items whose worker asked something
 * (needs_info, with the question), interrupted items, items awaiting review (with the pull
 * request to review), open anomalies, the pause, and ready
 * items held (by the owner, for the owner's approval, or for their repository's trust or
 * reapproval): `status`'s "needs you", computed once for both (lib/reports/needs-you.ts). Each
 * card says what to do: the commands to run, each with its button where the dashboard has one
 * (lib/web/verbs.ts; those that could lose work open their confirmation first); below the
 * cards, a button that pauses dispatch.
 */
import { html } from "hono/html";
import { QUICK_EXIT_LINES_SHOWN, statusReport } from "../../reports/status.ts";
import { NEED_LABELS } from "../../reports/needs-you.ts";
import type { NeedKind } from "../../reports/needs-you.ts";
import { describeQuickExit } from "../../work-items/quick-exit.ts";
import type { WebContext } from "../context.ts";
import type { Page } from "../page.ts";
import { command, commandButton, itemLink, none, postButton, safeUrl } from "./_parts.ts";
import type { ItemName } from "./_parts.ts";

/** What a card is about: the kind of need (lib/reports/needs-you.ts). */
export type CardKind = NeedKind;

/** One thing that needs the owner, as `status` reports it, with its quick exit said in words. */
export interface Card {
  kind: CardKind;
  item: ItemName | null;
  /** Why: the failure, the worker's question, the anomaly's detail, the hold's reason. */
  what: string;
  since: string;
  /** The commands that help, in the order to try them. */
  commands: string[];
  /** The anomaly a card's acknowledge button acknowledges. */
  anomaly: number | null;
  /** The pull request an item awaiting review waits on (absent on other cards). */
  review?: { number: number; url: string; merged: boolean };
  /** How its worker ended within seconds of its start, and the last lines it printed (absent otherwise). */
  quick_exit?: { line: string; last_lines: string[] };
}

/** The page's data. */
export interface NeedsMe {
  cards: Card[];
}


/** The pull request to review, linked when its address is a web address. */
function reviewLine(review: NonNullable<Card["review"]>) {
  const url = safeUrl(review.url);
  const label = `pull request #${review.number}${review.merged ? " (merged)" : ""}`;
  return html`<p class="review">review ${url ? html`<a href="${url}" rel="noreferrer noopener">${label}</a>` : label}</p>`;
}

export const needsPage: Page<NeedsMe> = {
  path: "/",
  api: "/api/needs",
  nav: "needs me",
  title: (data) => data.cards.length ? `${data.cards.length} need${data.cards.length === 1 ? "s" : ""} you` : "nothing needs you",
  async read(ctx: WebContext): Promise<NeedsMe> {
    const report = statusReport(await ctx.store(), ctx.config, false, ctx.stateDir);
    const cards = report.needs_you.map(({ kind, item, what, since, commands, anomaly, review, quick_exit }): Card => ({
      kind, item: item && { id: item.id, repo: item.repo, issue: item.issue, title: item.title }, what, since, commands, anomaly,
      ...(review ? { review } : {}),
      ...(quick_exit ? { quick_exit: { line: describeQuickExit(quick_exit), last_lines: quick_exit.last_lines.slice(-QUICK_EXIT_LINES_SHOWN) } } : {}),
    }));
    return { cards };
  },
  render(data, view) {
    // The heading is live with the cards: a page opened empty says so no longer once a card comes.
    const paused = data.cards.some((card) => card.kind === "paused");
    const pauseBox = paused ? "" : html`<p class="pause">${postButton("/dispatch/pause", "pause dispatch", view)} <span class="none">no new worker starts until you unpause (${command("robot-army pause")})</span></p>`;
    if (!data.cards.length) return html`<div id="cards" data-live><h1>Nothing needs you</h1>${none("No failed, waiting, interrupted, awaiting review or held items, and no open anomalies.")}${pauseBox}</div>`;
    return html`<div id="cards" data-live><h1>Needs you</h1>
${data.cards.map((card) => html`<article class="card ${card.kind}" ${card.item ? html`data-item="${String(card.item.id)}"` : ""} ${card.anomaly !== null ? html`data-anomaly="${String(card.anomaly)}"` : ""}>
<h2>${NEED_LABELS[card.kind]}${card.item ? html` · ${itemLink(card.item)} <span class="ref">${card.item.repo}#${card.item.issue}</span>` : ""}</h2>
<p class="what">${card.what}</p>
${card.review ? reviewLine(card.review) : ""}
${card.quick_exit ? html`<p class="quick-exit">${card.quick_exit.line}</p>${card.quick_exit.last_lines.length ? html`<pre class="last-lines">${card.quick_exit.last_lines.join("\n")}</pre>` : ""}` : ""}
<p class="since">since <time>${card.since}</time></p>
<p class="do">${card.commands.map((c) => html`<span class="verb">${commandButton(c, view)}${command(c)}</span>`)}</p>
</article>`)}${pauseBox}</div>`;
  },
};
