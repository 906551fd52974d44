/**
 * One terminal feed per session, however many pages stream it: the first stream of a session
 * opens its feed (one poll of its log or pane), every later one joins it, and the feed stops
 * when the last one goes. A stream that joins late is first given the screen as it is now (a
 * `reset` of what the feed has shown: its last reset and what came after, the last 64 KiB),
 * then what comes. A stream that reads too slowly is not let grow without bound: what waits
 * for it is replaced by one `reset` of the screen as it is.
 */
import { LOG_TAIL_BYTES } from "./terminal-feed.ts";
import type { TerminalChunk } from "./terminal-feed.ts";

/** Chunks waiting for one stream before they are folded into one reset. */
const MAX_WAITING = 256;

/** The feeds being shared, by session. */
export interface FeedHub {
  feeds: Map<string, Shared>;
}

interface Subscriber {
  waiting: TerminalChunk[];
  wake: (() => void) | null;
}

interface Shared {
  subscribers: Set<Subscriber>;
  /** The screen as the feed has shown it: null before its first reset or data. */
  screen: string | null;
  ended: boolean;
  stop: AbortController;
}

/** No feed open yet: one per dashboard app. */
export function feedHub(): FeedHub {
  return { feeds: new Map() };
}

/**
 * The feed of session `key` for one stream: joined to the one already open, or opened with
 * `open` (given the signal that stops it once no stream reads it). The stream leaves when it
 * stops reading (its iterator returned) or `signal` is aborted.
 */
export function sharedFeed(hub: FeedHub, key: string, open: (signal: AbortSignal) => AsyncIterable<TerminalChunk>, signal: AbortSignal): AsyncIterable<TerminalChunk> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<TerminalChunk> {
      let shared = hub.feeds.get(key);
      if (!shared) {
        shared = { subscribers: new Set(), screen: null, ended: false, stop: new AbortController() };
        hub.feeds.set(key, shared);
        void pump(hub, key, shared, open(shared.stop.signal));
      }
      const feed = shared;
      const me: Subscriber = { waiting: feed.screen === null ? [] : [{ kind: "reset", text: feed.screen }], wake: null };
      feed.subscribers.add(me);
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        feed.subscribers.delete(me);
        me.wake?.();
        if (feed.subscribers.size === 0 && !feed.ended) {
          feed.stop.abort();
          if (hub.feeds.get(key) === feed) hub.feeds.delete(key);
        }
      };
      signal.addEventListener("abort", leave, { once: true });
      return {
        async next(): Promise<IteratorResult<TerminalChunk>> {
          for (;;) {
            if (left) return { done: true, value: undefined };
            const chunk = me.waiting.shift();
            if (chunk) return { done: false, value: chunk };
            if (feed.ended) {
              leave();
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => (me.wake = resolve));
            me.wake = null;
          }
        },
        async return(): Promise<IteratorResult<TerminalChunk>> {
          signal.removeEventListener("abort", leave);
          leave();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** Reads the one feed, keeping the screen and handing each chunk to every stream; ends them all when it ends. */
async function pump(hub: FeedHub, key: string, shared: Shared, source: AsyncIterable<TerminalChunk>): Promise<void> {
  try {
    for await (const chunk of source) {
      if (chunk.kind === "reset") shared.screen = chunk.text;
      else if (chunk.kind === "data") shared.screen = tail((shared.screen ?? "") + chunk.text);
      for (const subscriber of shared.subscribers) {
        if (subscriber.waiting.length >= MAX_WAITING && shared.screen !== null) subscriber.waiting = [{ kind: "reset", text: shared.screen }];
        else subscriber.waiting.push(chunk);
        subscriber.wake?.();
      }
      if (shared.stop.signal.aborted) break;
    }
  } catch (error) {
    const note: TerminalChunk = { kind: "note", text: `the terminal cannot be read: ${(error as Error).message}` };
    for (const subscriber of shared.subscribers) subscriber.waiting.push(note);
  } finally {
    shared.ended = true;
    if (hub.feeds.get(key) === shared) hub.feeds.delete(key);
    for (const subscriber of shared.subscribers) subscriber.wake?.();
  }
}

/** The screen's last LOG_TAIL_BYTES, from a line's start when it had to be cut. */
function tail(text: string): string {
  if (text.length <= LOG_TAIL_BYTES) return text;
  const cut = text.slice(-LOG_TAIL_BYTES);
  const line = cut.indexOf("\n");
  return line === -1 ? cut : cut.slice(line + 1);
}
