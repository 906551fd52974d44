import { test } from "uvu";
import * as assert from "uvu/assert";
import { feedHub, sharedFeed } from "./shared-feed.ts";
import type { TerminalChunk } from "./terminal-feed.ts";

/** A feed the test drives: it counts its openings, hands out what the test pushes, and ends when told or when stopped. */
function drivenSource() {
  let opened = 0;
  let stopped = 0;
  const queue: TerminalChunk[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  const open = (signal: AbortSignal): AsyncIterable<TerminalChunk> => {
    opened++;
    signal.addEventListener("abort", () => {
      stopped++;
      wake?.();
    }, { once: true });
    return {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          if (signal.aborted) return;
          const chunk = queue.shift();
          if (chunk) {
            yield chunk;
            continue;
          }
          if (ended) return;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    };
  };
  return {
    open,
    push(chunk: TerminalChunk) {
      queue.push(chunk);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    get opened() {
      return opened;
    },
    get stopped() {
      return stopped;
    },
  };
}

const next = async (it: AsyncIterator<TerminalChunk>) => (await it.next()).value as TerminalChunk | undefined;

test("streams of one session share one feed; a late one first gets the screen as it is; the feed stops when the last one goes", async () => {
  const hub = feedHub();
  const source = drivenSource();
  const first = sharedFeed(hub, "s1", source.open, new AbortController().signal)[Symbol.asyncIterator]();
  source.push({ kind: "reset", text: "$ make\r\n" });
  assert.equal(await next(first), { kind: "reset", text: "$ make\r\n" });
  source.push({ kind: "data", text: "building\r\n" });
  assert.equal(await next(first), { kind: "data", text: "building\r\n" });

  const second = sharedFeed(hub, "s1", source.open, new AbortController().signal)[Symbol.asyncIterator]();
  assert.equal(await next(second), { kind: "reset", text: "$ make\r\nbuilding\r\n" }, "the screen so far");
  source.push({ kind: "data", text: "done\r\n" });
  assert.equal([await next(first), await next(second)], [{ kind: "data", text: "done\r\n" }, { kind: "data", text: "done\r\n" }]);
  assert.is(source.opened, 1, "one feed for both");

  await first.return!();
  assert.is(source.stopped, 0, "still read by the second");
  await second.return!();
  assert.is(source.stopped, 1, "stopped with the last stream");
  assert.is(hub.feeds.size, 0);

  // Another stream later opens the feed anew.
  const third = sharedFeed(hub, "s1", source.open, new AbortController().signal)[Symbol.asyncIterator]();
  source.push({ kind: "reset", text: "fresh" });
  assert.equal(await next(third), { kind: "reset", text: "fresh" });
  assert.is(source.opened, 2);
  await third.return!();
});

test("a feed that ends ends every stream after what it said; a client's abort leaves like a return", async () => {
  const hub = feedHub();
  const source = drivenSource();
  const client = new AbortController();
  const a = sharedFeed(hub, "s2", source.open, client.signal)[Symbol.asyncIterator]();
  const b = sharedFeed(hub, "s2", source.open, new AbortController().signal)[Symbol.asyncIterator]();
  source.push({ kind: "note", text: "exited 0" });
  source.end();
  assert.equal(await next(b), { kind: "note", text: "exited 0" });
  assert.is((await b.next()).done, true);
  client.abort();
  assert.is((await a.next()).done, true, "the aborted stream is over");
});

test("a stream that reads too slowly gets one reset of the screen instead of an endless backlog", async () => {
  const hub = feedHub();
  const source = drivenSource();
  const slow = sharedFeed(hub, "s3", source.open, new AbortController().signal)[Symbol.asyncIterator]();
  const fast = sharedFeed(hub, "s3", source.open, new AbortController().signal)[Symbol.asyncIterator]();
  source.push({ kind: "reset", text: "" });
  assert.equal(await next(fast), { kind: "reset", text: "" });
  for (let n = 0; n < 1000; n++) {
    source.push({ kind: "data", text: `${n}\n` });
    await next(fast);
  }
  // What waits for the slow one: a reset of the screen where its backlog was folded, then what came since; never a thousand chunks.
  const caught: TerminalChunk[] = [];
  for (;;) {
    const chunk = (await next(slow))!;
    caught.push(chunk);
    if (chunk.text.endsWith("999\n")) break;
  }
  assert.is(caught[0].kind, "reset");
  assert.ok(caught.length <= 256, `${caught.length} chunks waited`);
  const screen = caught.reduce((text, chunk) => (chunk.kind === "reset" ? chunk.text : text + chunk.text), "");
  assert.is(screen, Array.from({ length: 1000 }, (_, n) => `${n}\n`).join(""), "and together they are the whole screen");
  await slow.return!();
  await fast.return!();
});

test.run();
