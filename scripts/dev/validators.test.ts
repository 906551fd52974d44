import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync } from "node:fs";
import { configDefaultsSource, validatorSources } from "./validators.ts";

const root = new URL("../..", import.meta.url);

test("every committed validator in schema/validate/ is what its schema makes (npm run validators)", async () => {
  const sources = await validatorSources();
  const committed = readdirSync(new URL("schema/validate/", root)).filter((f) => f.endsWith(".mjs")).map((f) => f.replace(/\.mjs$/, "")).sort();
  assert.equal(committed, [...sources.keys()].sort(), "one validator per schema, no other");
  for (const [name, source] of sources) {
    assert.ok(readFileSync(new URL(`schema/validate/${name}.mjs`, root), "utf8") === source, `schema/validate/${name}.mjs has drifted from schema/${name}.schema.json: run npm run validators`);
  }
  assert.ok(readFileSync(new URL("schema/validate/config-defaults.json", root), "utf8") === await configDefaultsSource(), "schema/validate/config-defaults.json has drifted from schema/config.schema.json: run npm run validators");
});

test("a generated validator needs no ajv at run time, and checks what the schema says", async () => {
  for (const name of readdirSync(new URL("schema/validate/", root))) assert.not.match(readFileSync(new URL(`schema/validate/${name}`, root), "utf8"), /\brequire\(|from "ajv/);
  const { validate } = await import(new URL("schema/validate/config.mjs", root).href);
  const config: Record<string, unknown> = { daemon: { tick_seconds: 5 } };
  assert.ok(validate(config));
  assert.equal((config.daemon as Record<string, unknown>).effect_level, "plan", "defaults are filled in");
  assert.not.ok(validate({ daemon: { confirm_timeout: "forever" } }));
  assert.is(validate.errors[0].keyword, "format");
  // minLength counts code points, as ajv does: one emoji is one character.
  assert.ok(validate({ github: { author: "😀" } }));
  assert.not.ok(validate({ github: { author: "" } }));
});

test.run();
