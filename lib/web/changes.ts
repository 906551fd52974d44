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
  /** The reader's first read, which every stream opening waits for: its hello says where the log is. */
  #ready: Promise<void> | undefined;

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
      let gone = false;
      const listener = (id: number) => {
        pending = id;
        wake();
      };
      // One wake for a change and for the client going: nothing piles up on the stream while it is open.
      const leave = () => {
        gone = true;
        wake();
      };
      stream.onAbort(leave);
      c.req.raw.signal.addEventListener("abort", leave, { once: true });
      const heartbeat = setInterval(() => void stream.write(": heartbeat\n\n").catch(() => undefined), HEARTBEAT_MS);
      try {
        await this.#listen(listener);
        await stream.writeSSE({ event: "hello", data: String(this.#last ?? 0) });
        while (!gone && !stream.aborted) {
          if (pending === undefined) await new Promise<void>((resolve) => (wake = resolve));
          if (gone || stream.aborted || pending === undefined) continue;
          const id = pending;
          pending = undefined;
          await stream.writeSSE({ event: "change", data: String(id) });
        }
      } finally {
        clearInterval(heartbeat);
        c.req.raw.signal.removeEventListener("abort", leave);
        this.#unlisten(listener);
        release();
      }
    });
  }

  /** Adds a page; the first one starts the reader, with a read at once, so `hello` says where the log is now. */
  async #listen(listener: (id: number) => void): Promise<void> {
    this.#listeners.add(listener);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.#read(), CHANGES_EVERY_MS);
      this.#ready = this.#read();
    }
    await this.#ready;
  }

  #unlisten(listener: (id: number) => void): void {
    this.#listeners.delete(listener);
    if (this.#listeners.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#last = undefined;
      this.#ready = undefined;
    }
  }

  /**
   * Reads the newest id; a move tells every page. The first read only sets where changes start.
   * Never throws: a store that cannot be read now (closing, locked) is read again a second later.
   */
  async #read(): Promise<void> {
    const store = await this.#ctx.store().catch(() => undefined);
    if (!store) return;
    let id: number;
    try {
      id = lastAuditId(store);
    } catch {
      return;
    }
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
