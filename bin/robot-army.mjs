#!/usr/bin/env node
// `npx robot-army`: the entry point Node runs. On a Node that cannot run TypeScript (an
// older system Node first on PATH), it hands over to the Node 24 the project installed.
// Otherwise it turns on Node's compile cache before loading any TypeScript, so the
// sources are type-stripped and compiled once and later starts read them from disk, then
// hands argv to the router (scripts/robot-army.ts).
if (!process.features.typescript) {
  await handOver();
} else {
  // Taken as a module, not imported: an ES import of node:module evaluates all its exports, the REPL's history among them.
  process.getBuiltinModule("node:module").enableCompileCache?.();
  await import("../lib/caller.ts");
  const { main } = await import("../scripts/robot-army.ts");
  const { runMain } = await import("../lib/cli.ts");
  await runMain(main, process.argv.slice(2));
}

async function handOver() {
  const { spawnSync } = await import("node:child_process");
  const { existsSync } = await import("node:fs");
  const { fileURLToPath } = await import("node:url");
  const self = fileURLToPath(import.meta.url);
  const node = [new URL("../node_modules/node/bin/node", import.meta.url), new URL("../../node/bin/node", import.meta.url)]
    .map((url) => fileURLToPath(url))
    .find((path) => existsSync(path));
  if (!node || process.env.RA_HANDED_OVER) {
    process.stderr.write(`robot-army: needs Node 24 or later (this is ${process.version}); run "npm install" in ${fileURLToPath(new URL("..", import.meta.url))}\n`);
    process.exit(1);
  }
  const result = spawnSync(node, [self, ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, RA_HANDED_OVER: "1", RA_CALLER_PID: String(process.ppid) } });
  if (result.signal) process.kill(process.pid, result.signal);
  process.exit(result.status ?? 1);
}
