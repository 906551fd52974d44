/**
 * No credential in anything robot-army says (DESIGN rule 5), across a run that includes a
 * failed start whose post-create step prints the GitHub token, and a GitHub authentication
 * failure: every notification either channel received, every comment on the forge, every
 * audit record and every line the commands printed is searched for the GitHub token, the
 * wrong token, Pushover's token and its user key.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { labTemplate } from "../crash/lab.ts";
import type { Run } from "../crash/lab.ts";
import { openStore } from "../store/open.ts";
import { startNotifyReceivers } from "../testing/notify-receivers.ts";

test("no message, comment, audit record or line of output carries a credential, through a failed start and a GitHub authentication failure", async () => {
  const template = labTemplate();
  const lab = await template.open();
  const receivers = await startNotifyReceivers(join(lab.dir, "receivers"));
  try {
    const tokenFile = join(lab.forgeDir, "tokens", "owner");
    const githubToken = readFileSync(tokenFile, "utf8").trim();
    const wrongToken = "ghp_" + "w".repeat(36);
    // A careless post-create step: it prints the token robot-army uses, on a line and inside a URL, then fails.
    const step = `t=$(cat '${tokenFile}'); echo "token: $t" >&2; echo "fatal: could not push to https://x:$t@forge.internal" >&2; exit 7`;
    appendFileSync(lab.configFile, [
      "", "[worktrees]", `post_create = [["sh", "-c", ${JSON.stringify(step)}]]`, "",
      receivers.configToml, "[notifications]", 'events = ["dispatch", "completion", "failure", "needs_info", "anomaly"]', "",
    ].join("\n"));
    const runs: Run[] = [];
    const run = async (argv: string[], env: Record<string, string> = {}) => {
      const made = await lab.robotArmy(argv, { env });
      runs.push(made);
      return made;
    };
    assert.is((await run(["onboard", "demo/widgets"])).code, 0);
    const failedStart = await run(["run", "--once", "--effect-level", "live"]);
    assert.match(failedStart.stdout, "notified: demo/widgets#1 failed (item 1)");
    // The token goes bad: GitHub refuses the next poll.
    writeFileSync(tokenFile, wrongToken + "\n", { mode: 0o600 });
    const refused = await run(["run", "--once", "--effect-level", "live"], { RA_NOW: "2026-01-15T10:05:00Z" });
    assert.match(refused.stdout, "poll failed");
    await run(["log", "--json"]);
    await run(["show", "1"]);
    await run(["status"]);
    writeFileSync(tokenFile, githubToken + "\n", { mode: 0o600 });

    const secrets = { "the GitHub token": githubToken, "the wrong token": wrongToken, "Pushover's token": receivers.token, "Pushover's user key": receivers.user };
    const received = receivers.received();
    // The failure reached both channels, with its reason and the token in it redacted.
    const failure = received.webhook.map((r) => r.body as Record<string, unknown>).find((b) => b.kind === "failure");
    assert.ok(failure, "the failed start was notified");
    assert.match(String(failure!.message), "[redacted]");
    assert.ok(received.pushover.length >= 1);
    // Pushover's own form carries its token and user key: those two fields are how it is reached, not what it says.
    const said = [
      ...received.webhook.map((r) => JSON.stringify(r.body)),
      ...received.pushover.map((r) => {
        const { token: _token, user: _user, ...rest } = r.body as Record<string, unknown>;
        return JSON.stringify(rest);
      }),
    ];
    const comments = (await lab.api("GET", "/repos/demo/widgets/issues/1/comments")) as Array<{ body: string }>;
    assert.ok(comments.length >= 2, "the queued and failure comments are there to search");
    const store = await openStore(lab.stateDir, { sessionRoot: lab.sessionRoot });
    let audit: string[];
    try {
      audit = (store.statement("SELECT body FROM audit").all() as Array<{ body: string }>).map((r) => r.body);
    } finally {
      store.close();
    }
    assert.ok(audit.some((body) => body.includes('"kind":"failure"')), "the notification's own audit records are among those searched");
    const places: Record<string, string[]> = {
      notifications: said,
      comments: comments.map((c) => c.body),
      "audit records": audit,
      output: runs.flatMap((r) => [r.stdout, r.stderr]),
    };
    for (const [where, texts] of Object.entries(places)) {
      for (const [name, secret] of Object.entries(secrets)) {
        const found = texts.find((text) => text.includes(secret));
        assert.is(found, undefined, `${name} is in the ${where}: ${found?.slice(0, 300)}`);
      }
    }
  } finally {
    await receivers.close();
    await lab.close();
    template.remove();
  }
});

test.run();
