/**
 * `/api/changes`: what tells an open page that something changed, so it fetches its live parts
 * at once instead of at its next poll: a `hello` event with the audit log's newest record id as
 * the stream opens (a page read before it compares it with the id its data was read at,
 * `data-log-id`, so a change between the two is never missed), then a server-sent `change`
 * event (its data the newest id) whenever the log grows, as every change robot-army makes writes to it (an
 * item's state, a session's end, a keep, an anomaly). One read of the newest id a second, shared
 * by every page open, and none while no page listens; a comment every 15 s keeps proxies from
 * closing the stream. Streams are bounded overall and per client, as terminals are.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { lastAuditId } from "../store/audit.ts";
import type { WebContext, WebEnv } from "./context.ts";
import { clientOf } from "./security.ts";
import { HEARTBEAT_MS, streamSlots, takeStreamSlot } from "./terminal-events.ts";

/** How often the newest record id is read while a page listens. */
export const CHANGES_EVERY_MS = 1000;

/** The pages listening, and the one reader they share. */
export class ChangeWatch {
  readonly #listeners = new Set<(id: number) => void>();
  readonly #slots = streamSlots();
  #timer: ReturnType<typeof setInterval> | undefined;
  #last: number | undefined;

  readonly #ctx: WebContext;

  constructor(ctx: WebContext) {
    this.#ctx = ctx;
  }

  /** The stream of one page: `change` events until it goes. */
  events(c: Context<WebEnv>): Response {
    const release = takeStreamSlot(this.#slots, clientOf(c));
    if (typeof release !== "function") {
      c.header("Retry-After", "30");
      return c.json({ error: `Refused: ${release.refused}` }, 503);
    }
    return streamSSE(c, async (stream) => {
      let wake: () => void = () => {};
      let pending: number | undefined;
      const listener = (id: number) => {
        pending = id;
        wake();
      };
      await this.#listen(listener);
      const heartbeat = setInterval(() => void stream.write(": heartbeat\n\n"), HEARTBEAT_MS);
      const gone = new Promise<void>((resolve) => {
        stream.onAbort(resolve);
        c.req.raw.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      try {
        await stream.writeSSE({ event: "hello", data: String(this.#last ?? 0) });
        while (!stream.aborted) {
          const woken = new Promise<void>((resolve) => (wake = resolve));
          if (pending === undefined) await Promise.race([woken, gone]);
          if (stream.aborted || pending === undefined) break;
          const id = pending;
          pending = undefined;
          await stream.writeSSE({ event: "change", data: String(id) });
        }
      } finally {
        clearInterval(heartbeat);
        this.#unlisten(listener);
        release();
      }
    });
  }

  /** Adds a page; the first one starts the reader, with a read at once, so `hello` says where the log is now. */
  async #listen(listener: (id: number) => void): Promise<void> {
    this.#listeners.add(listener);
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.#read(), CHANGES_EVERY_MS);
    await this.#read();
  }

  #unlisten(listener: (id: number) => void): void {
    this.#listeners.delete(listener);
    if (this.#listeners.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#last = undefined;
    }
  }

  /** Reads the newest id; a move tells every page. The first read only sets where changes start. */
  async #read(): Promise<void> {
    const store = await this.#ctx.store().catch(() => undefined);
    if (!store) return;
    const id = lastAuditId(store);
    const before = this.#last;
    this.#last = id;
    if (before !== undefined && id !== before) for (const listener of this.#listeners) listener(id);
  }

  /** Ends every stream's reader (the app is closing). */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
