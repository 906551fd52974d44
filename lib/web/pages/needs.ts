/**
 * `/`, what needs the owner: failed items with why, items whose worker asked something
 * (needs_info, with the question), interrupted items, items awaiting review (with the pull
 * request to review), open anomalies, the pause, and ready
 * items held (by the owner, for the owner's approval, or for their repository's trust or
 * reapproval). Each card says what to do: the command to run, or a button where one is safe
 * (acknowledging an anomaly).
 */
import { html } from "hono/html";
import { ownerQuestion } from "../../reports/item.ts";
import { QUICK_EXIT_LINES_SHOWN, statusReport } from "../../reports/status.ts";
import { describeQuickExit } from "../../work-items/quick-exit.ts";
import type { NeedsYou } from "../../reports/status.ts";
import type { WebContext } from "../context.ts";
import type { Page } from "../page.ts";
import { command, itemLink, none, postButton, remedyOf, safeUrl } from "./_parts.ts";
import type { ItemName } from "./_parts.ts";

/** What a card is about. */
export type CardKind = "failed" | "needs_info" | "interrupted" | "awaiting_review" | "anomaly" | "paused" | "held" | "held_for_owner" | "untrusted";

/** One thing that needs the owner. */
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

const HEADINGS: Record<CardKind, string> = {
  failed: "failed", needs_info: "the worker asks you", interrupted: "interrupted", awaiting_review: "awaiting your review", anomaly: "anomaly",
  paused: "dispatch paused", held: "held by you", held_for_owner: "held for your approval", untrusted: "repository not trusted",
};

/** The card of an item that waits for the owner, with the commands that help in the order to try them. */
function cardOf(n: NeedsYou, item: ItemName): Card {
  const card = {
    item, since: n.since, anomaly: null,
    ...(n.quick_exit ? { quick_exit: { line: describeQuickExit(n.quick_exit), last_lines: n.quick_exit.last_lines.slice(-QUICK_EXIT_LINES_SHOWN) } } : {}),
  };
  switch (n.state) {
    case "failed":
      return { ...card, kind: "failed", what: n.reason ?? "no reason was recorded", commands: [`robot-army show ${n.id}`, `robot-army retry ${n.id}`] };
    case "needs_info":
      return { ...card, kind: "needs_info", what: questionOf(n), commands: [n.command] };
    case "interrupted":
      return {
        ...card, kind: "interrupted", what: n.reason ?? "its session ended without an exit record",
        commands: [`robot-army resume ${n.id}`, `robot-army restart ${n.id}`, `robot-army show ${n.id}`],
      };
    case "awaiting_review":
      return {
        ...card, kind: "awaiting_review", what: n.reason ?? "its worker exited 0 with a pull request open",
        commands: [`robot-army show ${n.id}`, `robot-army resume ${n.id}`], ...(n.pull_request ? { review: n.pull_request } : {}),
      };
  }
}

/** The pull request to review, linked when its address is a web address. */
function reviewLine(review: NonNullable<Card["review"]>) {
  const url = safeUrl(review.url);
  const label = `pull request #${review.number}${review.merged ? " (merged)" : ""}`;
  return html`<p class="review">review ${url ? html`<a href="${url}" rel="noreferrer noopener">${label}</a>` : label}</p>`;
}

/** What a needs_info item's worker asks, without the prefix its reason carries. */
function questionOf(n: NeedsYou): string {
  return ownerQuestion({ id: n.id, state: "needs_info", reason: n.reason, updated_at: n.since })!.question;
}

export const needsPage: Page<NeedsMe> = {
  path: "/",
  api: "/api/needs",
  nav: "needs me",
  title: (data) => data.cards.length ? `${data.cards.length} need${data.cards.length === 1 ? "s" : ""} you` : "nothing needs you",
  async read(ctx: WebContext): Promise<NeedsMe> {
    const store = await ctx.store();
    const report = statusReport(store, ctx.config, false, ctx.stateDir);
    const name = (i: ItemName): ItemName => ({ id: i.id, repo: i.repo, issue: i.issue, title: i.title });
    const cards: Card[] = [];
    for (const n of report.needs_you) cards.push(cardOf(n, name(n)));
    for (const a of report.anomalies) {
      cards.push({ kind: "anomaly", item: null, what: `${a.kind}: ${a.detail}`, since: a.raised_at, commands: [`robot-army anomalies --acknowledge ${a.id}`], anomaly: a.id });
    }
    if (report.paused) cards.push({ kind: "paused", item: null, what: report.paused.reason ?? "paused", since: report.paused.since, commands: ["robot-army unpause"], anomaly: null });
    for (const h of report.held) cards.push({ kind: "held", item: name(h), what: h.hold.reason ?? "held", since: h.hold.set_at, commands: [h.unhold], anomaly: null });
    for (const h of report.held_for_owner) cards.push({ kind: "held_for_owner", item: name(h), what: h.reason, since: h.created_at, commands: [`robot-army show ${h.id}`], anomaly: null });
    for (const u of report.untrusted) {
      const remedy = remedyOf(u.remedy);
      cards.push({
        kind: "untrusted", item: name(u), what: "step" in remedy ? `${u.repo} ${u.reason}: ${remedy.step}` : `${u.repo} ${u.reason}`,
        since: u.created_at, commands: "command" in remedy ? [remedy.command] : [], anomaly: null,
      });
    }
    return { cards };
  },
  render(data, view) {
    // The heading is live with the cards: a page opened empty says so no longer once a card comes.
    if (!data.cards.length) return html`<div id="cards" data-live><h1>Nothing needs you</h1>${none("No failed, waiting, interrupted, awaiting review or held items, and no open anomalies.")}</div>`;
    return html`<div id="cards" data-live><h1>Needs you</h1>
${data.cards.map((card) => html`<article class="card ${card.kind}" ${card.item ? html`data-item="${String(card.item.id)}"` : ""} ${card.anomaly !== null ? html`data-anomaly="${String(card.anomaly)}"` : ""}>
<h2>${HEADINGS[card.kind]}${card.item ? html` · ${itemLink(card.item)} <span class="ref">${card.item.repo}#${card.item.issue}</span>` : ""}</h2>
<p class="what">${card.what}</p>
${card.review ? reviewLine(card.review) : ""}
${card.quick_exit ? html`<p class="quick-exit">${card.quick_exit.line}</p>${card.quick_exit.last_lines.length ? html`<pre class="last-lines">${card.quick_exit.last_lines.join("\n")}</pre>` : ""}` : ""}
<p class="since">since <time>${card.since}</time></p>
<p class="do">${card.commands.map((c) => command(c))}${card.anomaly !== null ? postButton(`/anomalies/${card.anomaly}/acknowledge`, "acknowledge", view) : ""}</p>
</article>`)}</div>`;
  },
};
