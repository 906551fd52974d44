import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Hono } from "hono";
import { html } from "hono/html";
import { PROJECT_ROOT } from "../runtime.ts";
import { browserTest, launchBrowser } from "../testing/browser.ts";
import { inSessionDir, trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import type { WebEnv } from "./context.ts";
import { MAX_STREAMS, MAX_STREAMS_PER_CLIENT, streamSlots, takeStreamSlot, terminalEvents } from "./terminal-events.ts";
import { terminalFeed } from "./terminal-feed.ts";
import type { TerminalChunk } from "./terminal-feed.ts";

const processes = trackSessionProcesses(test, { childrenBy: "group" });

/** The store's row of a work item's session whose managed session is `id`. */
function storedSession(id: string): StoredSession {
  return {
    id, item: 1, name: "ra-demo-1", host: "test-host", launcher: "process", marker: "ra-demo-1", worktree: "/nonexistent/worktree",
    branch: "ra/1", started_at: "2026-01-01T00:00:00Z", simulated: false, attempt: 1, episode_key: "item-1", ended_at: null,
    end_reason: null, exit_code: null, terminal: null, profile: null, tabs_swept_at: null,
  };
}

/** An app serving `route` at /terminal on a loopback port of its own, for the body of `fn`. */
async function serving(route: (c: Parameters<typeof terminalEvents>[0]) => Response, fn: (url: string) => Promise<void>): Promise<void> {
  const app = new Hono<WebEnv>();
  app.get("/terminal", route);
  await listening(app, (origin) => fn(`${origin}/terminal`));
}

/** The app on a loopback port of its own, for the body of `fn`, given the app's origin. */
async function listening(app: Hono<WebEnv>, fn: (origin: string) => Promise<void>): Promise<void> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(started));
  });
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    (server as import("node:http").Server).closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** One server-sent event as a client reads it. */
interface Event {
  event: string;
  data: string;
}

/** Reads events from a response body until `enough` says so or the stream ends. */
async function readEvents(response: Response, enough: (events: Event[]) => boolean = () => false): Promise<{ events: Event[]; ended: boolean }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Event[] = [];
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { events, ended: true };
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf("\n\n")) !== -1) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const lines = block.split("\n").filter((line) => !line.startsWith(":"));
      if (lines.length === 0) continue;
      const field = (name: string) => lines.filter((line) => line.startsWith(`${name}: `)).map((line) => line.slice(name.length + 2)).join("\n");
      events.push({ event: field("event"), data: field("data") });
      if (enough(events)) {
        await reader.cancel();
        return { events, ended: false };
      }
    }
  }
}

test("each chunk is an event named for its kind with its text as a JSON string, then an end once the session ended", inSessionDir(async ({ root, work }) => {
  const script = "printf 'say \"hi\"\\n<b>&</b>\\n'; sleep 0.4; printf 'more\\n'; exit 0";
  const { record } = await processes.start(root, { command: "sh", args: ["-c", script], cwd: work, tags: { keep: "true" } });
  await serving((c) => terminalEvents(c, terminalFeed(storedSession(record.id), { sessionRoot: root, signal: c.req.raw.signal, pollMs: 50 })), async (url) => {
    const response = await fetch(url);
    assert.is(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", "text/event-stream");
    const { events, ended } = await readEvents(response);
    assert.ok(ended, "the stream ends with the feed");
    const names = events.map((e) => e.event);
    assert.is(names[0], "reset");
    assert.equal(names.slice(-2), ["note", "end"]);
    assert.ok(names.includes("data"), JSON.stringify(events));
    const chunks = events.slice(0, -1).map((e) => ({ kind: e.event, text: JSON.parse(e.data) as string }) as TerminalChunk);
    assert.is(chunks.filter((c) => c.kind !== "note").map((c) => c.text).join(""), "say \"hi\"\r\n<b>&</b>\r\nmore\r\n", "the text as written, each event's data one JSON line");
    assert.equal(chunks.at(-1), { kind: "note", text: "the session ended: its command exited with code 0" });
    assert.is(JSON.parse(events.at(-1)!.data), "");
  });
}));

test("live terminals are bounded, per client and overall; a stream's end gives its slot back, once", () => {
  const slots = streamSlots();
  const mine = Array.from({ length: MAX_STREAMS_PER_CLIENT }, () => takeStreamSlot(slots, "10.0.0.1"));
  assert.ok(mine.every((release) => typeof release === "function"));
  assert.equal(takeStreamSlot(slots, "10.0.0.1"), { refused: `this address has ${MAX_STREAMS_PER_CLIENT} live terminals open already; close one` });
  const release = mine[0] as () => void;
  release();
  release();
  assert.is(slots.open.get("10.0.0.1"), MAX_STREAMS_PER_CLIENT - 1, "released once, however often it is called");
  assert.is(typeof takeStreamSlot(slots, "10.0.0.1"), "function");
  for (let n = 0; n < MAX_STREAMS - MAX_STREAMS_PER_CLIENT; n++) takeStreamSlot(slots, `10.0.1.${n}`);
  assert.equal(takeStreamSlot(slots, "10.0.2.1"), { refused: `the dashboard streams ${MAX_STREAMS} live terminals already` });
});

test("a client that disconnects stops the feed", inSessionDir(async ({ root, work }) => {
  const { record } = await processes.start(root, { command: "sh", args: ["-c", "echo waiting; exec sleep 30"], cwd: work });
  let requestSignal: AbortSignal | undefined;
  let stopped: Promise<IteratorResult<TerminalChunk>> | undefined;
  let ended = 0;
  await serving((c) => {
    requestSignal = c.req.raw.signal;
    // The feed's own polling, watched: how terminalEvents stops it.
    const chunks = terminalFeed(storedSession(record.id), { sessionRoot: root, signal: new AbortController().signal, pollMs: 50 })[Symbol.asyncIterator]();
    const watched: AsyncIterable<TerminalChunk> = {
      [Symbol.asyncIterator]: () => ({ next: () => chunks.next(), return: () => (stopped = chunks.return!()) }),
    };
    return terminalEvents(c, watched, () => ended++);
  }, async (url) => {
    const client = new AbortController();
    const response = await fetch(url, { signal: client.signal });
    const { events } = await readEvents(response, (e) => e.length === 1);
    assert.equal(events, [{ event: "reset", data: JSON.stringify("waiting\r\n") }]);
    client.abort();
    await waitFor("the feed to be stopped", () => stopped, 5_000);
    assert.equal(await stopped, { done: true, value: undefined }, "the feed ended");
    await waitFor("the request's signal to be aborted", () => requestSignal?.aborted, 5_000);
    await waitFor("the stream's end told, so its slot is given back", () => ended === 1, 5_000);
  });
  process.kill(-record.childPgid!, "SIGTERM");
}));

/** The dashboard's policy: no inline script or style. */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'";

browserTest(test)("terminal.js shows the events in xterm.js under the strict policy, colours and all, the notes beside it as text", async () => {
  const app = new Hono<WebEnv>();
  app.use(async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CSP);
  });
  const file = (path: string, type: string) => () => new Response(readFileSync(join(PROJECT_ROOT, path)), { headers: { "content-type": type } });
  app.get("/static/xterm.js", file("node_modules/@xterm/xterm/lib/xterm.js", "text/javascript"));
  app.get("/static/xterm.css", file("node_modules/@xterm/xterm/css/xterm.css", "text/css"));
  app.get("/static/terminal.js", file("lib/web/static/terminal.js", "text/javascript"));
  app.get("/items/1", (c) => c.html(html`<!doctype html><html><head><link rel="stylesheet" href="/static/xterm.css"></head><body>
    <div id="terminal" data-stream="/api/items/1/terminal"></div><script src="/static/xterm.js"></script><script src="/static/terminal.js"></script></body></html>`));
  let sent = 0;
  app.get("/api/items/1/terminal", (c) => terminalEvents(c, (async function* (): AsyncGenerator<TerminalChunk> {
    sent++;
    yield { kind: "note", text: "no record of this session is left" };
    yield { kind: "reset", text: "\x1b[31mred\x1b[39m plain\r\nsecond" };
    yield { kind: "data", text: "\r\n<b>not markup</b>" };
    yield { kind: "note", text: "the session ended: <i>code</i> 0" };
  })()));
  const browser = await launchBrowser();
  try {
    await listening(app, async (origin) => {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("console", (message) => void (message.type() === "error" && !message.text().includes("404") && problems.push(message.text())));
      page.on("pageerror", (error) => void problems.push(error.message));
      await page.goto(`${origin}/items/1`);
      await page.waitForSelector("#terminal[data-ended]", { timeout: 5_000 });
      assert.is((await page.locator(".xterm-rows").innerText()).trim(), "red plain\nsecond\n<b>not markup</b>");
      assert.is(await page.locator("[data-terminal-note]").textContent(), "the session ended: <i>code</i> 0", "a note is text, never markup");
      // The page's own code, as text: this file is typed without the DOM's names.
      const red = await page.evaluate(`(() => {
        const span = [...document.querySelectorAll(".xterm-rows span")].find((e) => e.textContent === "red");
        return span ? getComputedStyle(span).color : "no span";
      })()`);
      assert.is(red, "rgb(204, 0, 0)", "xterm's own colours apply though the policy refuses inline styles");
      assert.equal(problems, [], "no error, no style the policy refused");
      assert.is(await page.evaluate(`document.querySelectorAll("style").length`), 0);
      // EventSource reconnects a closed stream after about 3 s by itself.
      await page.waitForTimeout(3_500);
      assert.is(sent, 1, "after the end event the page does not reconnect");
    });
  } finally {
    await browser.close();
  }
});

test("no session process outlived its test", () => {
  assert.equal(processes.leaked, []);
});

test.run();
