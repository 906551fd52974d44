#!/usr/bin/env node
// `npx robot-army`: the entry point Node runs. It turns on Node's compile cache before
// loading any TypeScript, so the sources are type-stripped and compiled once and every
// later start reads them from disk, then hands argv to the router (scripts/robot-army.ts).
import module from "node:module";

module.enableCompileCache?.();
const { main } = await import("../scripts/robot-army.ts");
const { runMain } = await import("../lib/cli.ts");
await runMain(main, process.argv.slice(2));
