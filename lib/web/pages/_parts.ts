/**
 * Pieces the pages share: an item's name with its link, a command for the owner to run,
 * a button that posts one of the owner's verbs with its CSRF token and one-time key (or opens
 * its confirmation), and times.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { View } from "../page.ts";
import { buttonFor } from "../verbs.ts";

/** An item, as lists name it. */
export interface ItemName {
  id: number;
  repo: string;
  issue: number;
  title: string;
}

/** A link only to a web address: anything else (a `javascript:` URL from a hostile forge) is shown as no link. */
export function safeUrl(url: string | null | undefined): string | null {
  return url && /^https?:\/\/[^\s]+$/i.test(url) ? url : null;
}

/** `owner/name#N`, linked to the issue when its address is known. */
export function issueLink(item: { repo: string; issue: number }, url: string | null): HtmlEscapedString {
  const safe = safeUrl(url);
  const text = `${item.repo}#${item.issue}`;
  return (safe ? html`<a class="issue" href="${safe}" rel="noreferrer noopener">${text}</a>` : html`<span class="issue">${text}</span>`) as HtmlEscapedString;
}

/** The item's page link and its title. */
export function itemLink(item: ItemName): HtmlEscapedString {
  return html`<a class="item" href="/items/${String(item.id)}">item ${String(item.id)}</a> <span class="title">${item.title}</span>` as HtmlEscapedString;
}

/** A command the owner runs, shown to copy. */
export function command(text: string): HtmlEscapedString {
  return html`<code class="command">${text}</code>` as HtmlEscapedString;
}

/**
 * A button that POSTs to `action` with the CSRF token, a one-time key (a second press of the
 * same form acts no more: lib/web/actions.ts) and the page to come back to; nothing on a
 * read-only dashboard.
 */
export function postButton(action: string, label: string, view: View, cls = "", fields: HtmlEscapedString | string = ""): HtmlEscapedString {
  if (!view.actions) return html`` as HtmlEscapedString;
  return html`<form method="post" action="${action}" class="inline" data-action><input type="hidden" name="csrf" value="${view.csrf}"><input type="hidden" name="once" value="${globalThis.crypto.randomUUID()}"><input type="hidden" name="back" value="${view.here}">${fields}<button type="submit" class="${cls}">${label}</button></form>` as HtmlEscapedString;
}

/** The button a command becomes (lib/web/verbs.ts buttonFor): posted, or a link to its confirmation; nothing when it has none or on a read-only dashboard. */
export function commandButton(command: string, view: View): HtmlEscapedString {
  const button = buttonFor(command);
  if (!button || !view.actions) return html`` as HtmlEscapedString;
  if ("post" in button) return postButton(button.post, button.label, view);
  return html`<a class="button" href="${button.confirm}?back=${encodeURIComponent(view.here)}">${button.label}</a>` as HtmlEscapedString;
}

/** A section's empty state. */
export function none(text: string): HtmlEscapedString {
  return html`<p class="none">${text}</p>` as HtmlEscapedString;
}
