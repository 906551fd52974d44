/**
 * A terminal feed as server-sent events, for the item page's terminal: each chunk an event
 * named for its kind (`reset`, `data`, `note`) whose data is the chunk's text as a JSON
 * string (one line, whatever the text holds), a comment every 15 s so proxies keep the
 * stream open, and a last `end` event once the feed has ended, so the page stops
 * reconnecting to a session that is over. The feed is stopped when the client goes.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { redact } from "../redact.ts";
import type { WebEnv } from "./context.ts";
import type { TerminalChunk } from "./terminal-feed.ts";

/** How often a comment is sent while the feed is quiet. */
export const HEARTBEAT_MS = 15_000;

/** Live terminals streamed at once, by every client together and by one client (an address, an IPv6 /64). */
export const MAX_STREAMS = 32;
export const MAX_STREAMS_PER_CLIENT = 8;

/** The streams open now, by client. */
export interface StreamSlots {
  open: Map<string, number>;
}

/** No stream open yet: one per dashboard app. */
export function streamSlots(): StreamSlots {
  return { open: new Map() };
}

/**
 * Takes a slot for a stream of `client`, or answers why none is free (503, Retry-After): a
 * stream holds a file poll and a connection for as long as the page is open, so thousands
 * at once would leave every page unanswered. Returns the release, called once when the stream ends.
 */
export function takeStreamSlot(slots: StreamSlots, client: string): (() => void) | { refused: string } {
  const total = [...slots.open.values()].reduce((sum, n) => sum + n, 0);
  const own = slots.open.get(client) ?? 0;
  if (total >= MAX_STREAMS) return { refused: `the dashboard streams ${MAX_STREAMS} live terminals already` };
  if (own >= MAX_STREAMS_PER_CLIENT) return { refused: `this address has ${MAX_STREAMS_PER_CLIENT} live terminals open already; close one` };
  slots.open.set(client, own + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (slots.open.get(client) ?? 1) - 1;
    if (left > 0) slots.open.set(client, left);
    else slots.open.delete(client);
  };
}

/**
 * The feed as an event stream; the feed is stopped (its iterator returned, which aborts a
 * terminalFeed's polling) as soon as the client disconnects.
 * @example
 * app.get("/api/items/:id/terminal", (c) => terminalEvents(c, terminalFeed(session, { sessionRoot, signal: c.req.raw.signal })));
 */
export function terminalEvents(c: Context<WebEnv>, feed: AsyncIterable<TerminalChunk>, onEnd: () => void = () => {}): Response {
  return streamSSE(c, async (stream) => {
    const chunks = feed[Symbol.asyncIterator]();
    let finished = false;
    const stop = () => {
      if (finished) return;
      finished = true;
      void chunks.return?.().catch(() => undefined);
    };
    stream.onAbort(stop);
    c.req.raw.signal.addEventListener("abort", stop, { once: true });
    const heartbeat = setInterval(() => void stream.write(": heartbeat\n\n"), HEARTBEAT_MS);
    try {
      for (;;) {
        const next = await chunks.next();
        if (next.done) {
          finished = true;
          break;
        }
        if (stream.aborted) break;
        // What a worker prints may hold a credential it was given: redacted as everything shown is.
        await stream.writeSSE({ event: next.value.kind, data: JSON.stringify(redact(next.value.text)) });
      }
      if (!stream.aborted) await stream.writeSSE({ event: "end", data: JSON.stringify("") });
    } catch (error) {
      // One line beside the terminal, never a stack trace in the page.
      if (!stream.aborted) await stream.writeSSE({ event: "note", data: JSON.stringify(`the terminal cannot be read: ${(error as Error).message}`) });
      finished = true;
    } finally {
      clearInterval(heartbeat);
      c.req.raw.signal.removeEventListener("abort", stop);
      stop();
      onEnd();
    }
  });
}
