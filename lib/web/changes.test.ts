import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { defaultConfig } from "../config.ts";
import { appendAudit, lastAuditId } from "../store/audit.ts";
import { withStore } from "../testing/items.ts";
import { webApp } from "./app.ts";
import { webContext } from "./context.ts";
import { webAccess } from "./security.ts";
import { listen } from "./serve.ts";

const config = await defaultConfig();

/** Reads server-sent events from `body` until `until` holds of what came, or `ms` pass. */
async function eventsUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: (text: string) => boolean, ms = 8000): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  while (!until(text)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`no such event in ${ms} ms; came: ${JSON.stringify(text)}`);
    const next = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), left))]);
    if (next === null) continue;
    if (next.done) throw new Error(`the stream ended; came: ${JSON.stringify(text)}`);
    text += decoder.decode(next.value, { stream: true });
  }
  return text;
}

test("an open page hears where the log is as its stream opens, then of every change to it as a change event with the newest id", () =>
  withStore(async (store, stateDir) => {
    appendAudit(store, { kind: "keep.placed", item: 1 });
    const ctx = webContext(config, stateDir, join(stateDir, "sessions"));
    const server = await listen(webApp(ctx, webAccess(config, "127.0.0.1", 0)), "127.0.0.1", 0);
    const stop = new AbortController();
    try {
      const response = await fetch(`${server.url}api/changes`, { signal: stop.signal });
      assert.is(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", "text/event-stream");
      const reader = response.body!.getReader();
      let seen = await eventsUntil(reader, (text) => /event: hello\ndata: \d+\n/.test(text));
      // Where the log is as the stream opens: a page read before it compares this with its own data-log-id.
      assert.match(seen, `event: hello\ndata: ${lastAuditId(store)}\n`);
      // Reads a second apart that find the log as it was say nothing.
      await new Promise((done) => setTimeout(done, 2500));
      appendAudit(store, { kind: "keep.released", item: 1 });
      const id = lastAuditId(store);
      seen = await eventsUntil(reader, (text) => text.includes(`event: change\ndata: ${id}\n`));
      assert.is(seen.match(/event: change/g)?.length, 1, `one change, for one record: ${seen}`);
    } finally {
      stop.abort();
      await server.close();
      ctx.close();
    }
  }));

test.run();
