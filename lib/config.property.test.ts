/**
 * Properties of the config's parser: whatever config.toml holds, loading it ends in a
 * config or a ConfigError (never another throw); every value it accepts is within what the
 * schema allows; and a value the schema allows is read back as written.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { stringify } from "smol-toml";
import { ConfigError, configSchema, parseConfig } from "./config.ts";
import type { SchemaNode } from "./config.ts";
import { parseDuration, MAX_TIMER_MS } from "./duration.ts";
import { holdsAsync, thrownAsync } from "./testing/property.ts";

const PATH = "/tmp/robot-army-property/config.toml";
const ENV = { HOME: "/tmp/robot-army-property/home" };

/** Every leaf key of the schema, with its dotted path (the repos map's entry keys as `repos.*.key`). */
function leaves(node: SchemaNode, path: string[] = []): Array<{ path: string[]; node: SchemaNode }> {
  return Object.entries(node.properties ?? {}).flatMap(([name, child]) => {
    if (child.properties) return leaves(child, [...path, name]);
    if (typeof child.additionalProperties === "object") return leaves(child.additionalProperties, [...path, name, "*"]);
    return [{ path: [...path, name], node: child }];
  });
}

const LEAVES = leaves(configSchema());

/** Values TOML can hold, near and far from what a key wants. */
const tomlValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(), fc.integer({ min: -10, max: 100 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n)),
  fc.double(), fc.constantFrom(0, -1, 2147483, 2147484, Number.MAX_SAFE_INTEGER, Infinity, -Infinity, NaN, 0.5),
  fc.string({ maxLength: 20 }), fc.constantFrom("", "30s", "30d", "24d", "1h30m", "9999999w", "http://127.0.0.1:9", "https://x:ghp_aaaaaaaaaaaaaaaaaaaaaaaa@h", "ftp://x", "~", "~/x", "../x", "ghp_aaaaaaaaaaaaaaaaaaaaaaaa", "tmux", "live", "oldest", "A_B", "a-b", "owner/name"),
  fc.boolean(), fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
  fc.date({ noInvalidDate: true }),
);

const repoNameArb = fc.oneof(fc.constantFrom("demo/widgets", "a/b", "bad name", "no-slash", "acme/token-service", "__proto__/x"), fc.string({ maxLength: 10 }));

/** A config with a few keys set to any values, as a document TOML can write. */
const configDocArb = fc.array(fc.tuple(fc.constantFrom(...LEAVES), tomlValueArb, repoNameArb), { maxLength: 4 }).map((sets) => {
  const doc: Record<string, Record<string, unknown>> = {};
  for (const [{ path }, value, repo] of sets) {
    const segments = path.map((s) => (s === "*" ? repo : s));
    let table = doc as Record<string, unknown>;
    for (const segment of segments.slice(0, -1)) {
      const next = Object.hasOwn(table, segment) ? table[segment] : undefined;
      table = (typeof next === "object" && next !== null && !Array.isArray(next) ? next : setOwn(table, segment, {})) as Record<string, unknown>;
    }
    setOwn(table, segments.at(-1)!, value);
  }
  return doc;
});

/**
 * Sets an own property, whatever its name: a repository named "__proto__" (fast-check makes
 * that name on purpose) would otherwise reach Object.prototype and change every object in
 * the process, failing tests that have nothing to do with it.
 */
function setOwn<T>(table: Record<string, unknown>, key: string, value: T): T {
  Object.defineProperty(table, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

/** The document as TOML text, or undefined when TOML cannot write it (NaN in some spellings, say). */
function toToml(doc: unknown): string | undefined {
  try {
    return stringify(doc as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** Text that is TOML now and then: lines of headers, keys, values and breakage. */
const tomlishArb = fc.array(fc.oneof(
  fc.constantFrom("[daemon]", "[github]", "[worker]", "[repos.\"demo/widgets\"]", "[[daemon]]", "[daemon", "[]", "[a.b.c]", "[repos.\"__proto__\"]", "__proto__ = 1", "constructor = {}"),
  fc.tuple(fc.constantFrom("tick_seconds", "effect_level", "api_base", "token", "path", "args", "binary", "x", "\"quoted key\"", "a.b"), fc.constantFrom(" = ", "=", " "), fc.constantFrom("1", "-1", "1e999", "nan", "inf", "99999999999999999999", "\"x", "'''", "\"\"\"a\nb\"\"\"", "[1, \"a\"]", "{a = 1}", "1979-05-27T07:32:00Z", "true", "\"\\u0000\"", "\"\\uD800\"", "[".repeat(2000)))
    .map((parts) => parts.join("")),
  fc.string({ maxLength: 20 }),
), { maxLength: 8 }).map((lines) => lines.join("\n"));

test("whatever config.toml holds, parseConfig gives a config or throws a ConfigError", async () => {
  await holdsAsync("parseConfig throws only ConfigError on any text", [fc.oneof(tomlishArb, configDocArb.map((doc) => toToml(doc) ?? ""))], async (text) => {
    const error = await thrownAsync(() => parseConfig(text, PATH, ENV));
    if (error !== undefined) assert.ok(error instanceof ConfigError && error.message.startsWith(`Cannot read config "${PATH}": `), String((error as Error)?.stack ?? error));
  }, 1500);
});

test("every value parseConfig accepts is within what the schema allows for its key", async () => {
  await holdsAsync("parseConfig accepts only values within the schema's bounds", [configDocArb], async (doc) => {
    const text = toToml(doc);
    if (text === undefined) return;
    let config: unknown;
    try {
      config = await parseConfig(text, PATH, ENV);
    } catch {
      return;
    }
    for (const { path, node } of LEAVES) {
      for (const value of valuesAt(config, path)) assert.ok(withinSchema(value, node), `${path.join(".")} = ${JSON.stringify(value)}`);
    }
  }, 1500);
});

test("a value the schema allows is read back as written", async () => {
  const allowed = fc.constantFrom(...LEAVES.filter(({ node }) => node.type === "integer" || node.enum)).chain(({ path, node }) =>
    (node.enum ? fc.constantFrom(...node.enum) : fc.integer({ min: node.minimum ?? 0, max: node.maximum ?? Number.MAX_SAFE_INTEGER })).map((value) => ({ path, value })));
  await holdsAsync("parseConfig reads back every allowed number and choice", [allowed], async ({ path, value }) => {
    const segments = path.map((s) => (s === "*" ? "demo/widgets" : s));
    const doc: Record<string, unknown> = {};
    let table = doc;
    for (const segment of segments.slice(0, -1)) table = (table[segment] = {}) as Record<string, unknown>;
    table[segments.at(-1)!] = value;
    if (segments[0] === "repos") (doc.repos as Record<string, Record<string, unknown>>)["demo/widgets"].path = "/src/widgets";
    const config = await parseConfig(stringify(doc), PATH, ENV);
    assert.equal(valuesAt(config, path), [value]);
  });
});

test("the properties leave Object.prototype as they found it", () => {
  assert.equal(Object.keys(Object.prototype), []);
});

/** The values at a schema path in a loaded config (every repository's, for `repos.*`). */
function valuesAt(config: unknown, path: string[]): unknown[] {
  let values = [config];
  for (const segment of path) {
    values = values.flatMap((v) => {
      if (typeof v !== "object" || v === null) return [];
      const table = v as Record<string, unknown>;
      return segment === "*" ? Object.values(table) : Object.hasOwn(table, segment) ? [table[segment]] : [];
    });
  }
  return values.filter((v) => v !== undefined);
}

/** Whether a loaded value keeps its key's rules: type, bounds, choices, pattern, format. */
function withinSchema(value: unknown, node: SchemaNode): boolean {
  if (node.enum) return node.enum.includes(value);
  if (node.type === "integer") return Number.isSafeInteger(value) && (value as number) >= (node.minimum ?? -Infinity) && (value as number) <= (node.maximum ?? Infinity);
  if (node.type === "array") return Array.isArray(value) && value.every((item) => node.items === undefined || withinSchema(item, node.items));
  if (node.type !== "string") return true;
  if (typeof value !== "string") return false;
  if ((node.minLength ?? 0) > value.length) return false;
  if (node.pattern && !new RegExp(node.pattern).test(value)) return false;
  if (node.format === "path") return value.startsWith("/");
  if (node.format === "url") return /^https?:\/\//.test(value);
  if (node.format === "duration" || node.format === "timer") {
    try {
      parseDuration(value, "duration", node.format === "timer" ? MAX_TIMER_MS : undefined);
      return true;
    } catch {
      return false;
    }
  }
  return true;
}

test.run();
