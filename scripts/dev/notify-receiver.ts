/**
 * `npm run receiver [-- --port N]`: a loopback webhook that prints every notification it
 * receives, for watching a rehearsal tell its owner what happens:
 *
 *   npm run receiver                                       # in one terminal
 *   npm start -- --webhook-url http://127.0.0.1:8765/hook  # in another
 *
 * It is the imitation the tests use (lib/testing/notify-receivers.ts): it takes a JSON
 * object and answers 200, as a webhook service does. Ctrl-C stops it.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../../lib/testing/fixtures.ts";
import { startNotifyReceivers } from "../../lib/testing/notify-receivers.ts";

const { values } = parseArgs({ options: { port: { type: "string", default: "8765" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`receiver: --port must be a port number, not ${JSON.stringify(values.port)}`);
  process.exit(2);
}
const dir = makeTempDir("robot-army-receiver-");
const receivers = await startNotifyReceivers(join(dir, "receivers"), {
  webhookPort: port,
  onReceive: (which, request) => {
    if (which !== "webhook") return;
    const body = request.body as Record<string, unknown>;
    const lines = String(body.message ?? "").split("\n").map((line) => `  ${line}`);
    console.log([`webhook received (${request.answer?.status ?? "no answer"}): ${String(body.title ?? JSON.stringify(body))}`, ...lines].join("\n"));
  },
});
console.log(`receiver: listening at ${receivers.webhookUrl}; run: npm start -- --webhook-url ${receivers.webhookUrl}`);
const stop = async () => {
  await receivers.close();
  removeTempDir(dir);
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
