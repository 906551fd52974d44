/**
 * What a dashboard page is: where it lives, the data it reads (served as JSON under
 * `/api/...`, the same data the page shows) and how that data is drawn. Every page is
 * drawn with hono/html's `html` template, which escapes every value put in it: text from
 * GitHub or a worker is never markup.
 */
import type { HtmlEscapedString } from "hono/utils/html";
import type { WebContext } from "./context.ts";

/** What a page is asked: its route's parameters and the query. */
export interface PageRequest {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/** What drawing a page needs besides its data: the CSRF token its forms carry and where it is (forms come back to it). */
export interface View {
  readonly csrf: string;
  /** The page's path and query, as a form's `back`. */
  readonly here: string;
  /** Whether buttons are drawn: false on a read-only dashboard (`serve --read-only`), which refuses every action. */
  readonly actions: boolean;
}

/** One page of the dashboard. */
export interface Page<T> {
  /** Its route (Hono syntax: `/items/:id`). */
  readonly path: string;
  /** Its data's route: `/api` before the page's (`/` is `/api/needs`). */
  readonly api: string;
  /** The navigation entry it is shown under (null: not in the navigation). */
  readonly nav: string | null;
  /** It draws a worker's terminal (xterm.js, with its scripts and stylesheet: static/terminal.js). */
  readonly terminal?: boolean;
  title(data: T): string;
  /** Reads the data; a missing thing (an unknown item) is a NotFound. */
  read(ctx: WebContext, request: PageRequest): Promise<T> | T;
  render(data: T, view: View): HtmlEscapedString | Promise<HtmlEscapedString>;
}

/** A page whose subject does not exist: a 404 with this line. */
export class NotFound extends Error {}

/** A whole number from 1 that a path or query names (an id), or null: anything else names nothing. */
export function wholeNumber(text: string | null | undefined): number | null {
  if (!text || !/^[1-9]\d*$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * `next` when it is a path on this site (a form's `back`, the login's `next`), else `/`: a
 * second slash or a backslash after the first (`//evil.example`), a scheme, a character a
 * browser would drop (a tab that turns `/\t/evil` into `//evil`), or a `.` or `..` segment
 * (plain or percent-encoded: `/.//evil.example` is `//evil.example` once resolved) is never
 * followed.
 */
export function localPath(next: unknown): string {
  if (typeof next !== "string" || !/^\/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/.test(next)) return "/";
  const path = next.split("?")[0];
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) || path.includes("//")) return "/";
  return next;
}

/** A page of any data (the list the app mounts). */
// deno-lint-ignore no-explicit-any
export type AnyPage = Page<any>;
