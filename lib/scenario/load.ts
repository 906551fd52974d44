/**
 * Reading scenarios: finds `scenarios/**\/*.yaml`, parses each, checks it against
 * `schema/scenario.schema.json` and reports every problem with the file and the YAML line
 * it came from, e.g. `scenarios/cli/help.yaml:14: /steps/0/expect/exit must be integer (schema ...)`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Document, LineCounter, Node } from "yaml";
import { validatorFor } from "../schema.ts";
import { isSetup, SETUPS } from "./setups/index.ts";

/** The checkout robot-army runs from (no trailing slash). */
export const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** What a step's outcome must be; fragments are matched against normalised output. */
export interface Expectation {
  exit: number;
  stdout_contains?: string[];
  stdout_not_contains?: string[];
  stderr_contains?: string[];
  stderr_not_contains?: string[];
  files_exist?: string[];
  files_absent?: string[];
  files_contain?: Record<string, string[]>;
}

/**
 * A button pressed on the dashboard (`robot-army serve`, started for the scenario on its first
 * press): a POST to `path` with the form's fields, its CSRF token and one-time key added as the
 * page's form carries them; its answer is the command's own lines (stdout, or stderr when
 * refused) and exit code.
 */
export interface Press {
  path: string;
  form?: Record<string, string>;
}

/** One step a scenario takes: a command (argv after `robot-army`, never a shell string), or a button pressed. */
export interface Step {
  id: string;
  /** Absent on a step that presses a button. */
  run?: string[];
  press?: Press;
  stdin?: string;
  env?: Record<string, string>;
  note?: string;
  /** Seconds to keep re-running the step until its expectations hold. */
  eventually?: number;
  expect: Expectation;
}

/** One behaviour, as written in `scenarios/<category>/<slug>.yaml`. */
export interface Scenario {
  /** Path relative to the project root, e.g. `scenarios/cli/help.yaml`. */
  file: string;
  /** The file name without `.yaml`: the catalogue page is `<category>/<slug>.md`. */
  slug: string;
  title: string;
  category: string;
  situation: string;
  what_you_run: string;
  setup: string;
  given?: string[];
  env?: Record<string, string>;
  steps: Step[];
  then: string[];
  outcome: string;
}

/** The scenarios a run takes, or every problem that stops it. */
export interface Loaded {
  scenarios: Scenario[];
  problems: string[];
}

/** Scenario files below `<root>/scenarios` whose relative path contains the filter, sorted. */
export function findScenarioFiles(root: string = PROJECT_ROOT, filter?: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".yaml")) found.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(join(root, "scenarios"));
  return found.filter((file) => !filter || file.includes(filter)).sort();
}

/** Loads and checks every scenario matching the filter; any problem means none should run. */
export async function loadScenarios(root: string = PROJECT_ROOT, filter?: string): Promise<Loaded> {
  const loaded: Loaded = { scenarios: [], problems: [] };
  for (const file of findScenarioFiles(root, filter)) {
    const one = await parseScenario(readFileSync(join(root, file), "utf8"), file);
    if (one.scenario) loaded.scenarios.push(one.scenario);
    loaded.problems.push(...one.problems);
  }
  return loaded;
}

/** Parses one scenario's text; `file` (relative to the root) names it in problems. */
export async function parseScenario(text: string, file: string): Promise<{ scenario?: Scenario; problems: string[] }> {
  const { LineCounter, parseDocument } = await import("yaml");
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length) {
    return { problems: doc.errors.map((e) => `${file}:${e.linePos?.[0].line ?? 1}: ${e.message.split("\n")[0]}`) };
  }
  const value = doc.toJS();
  const at = (path: string, key?: string) => `${file}:${lineOf(doc, lines, path, key)}`;
  const problems = (await validatorFor("scenario"))(value).map((p) => {
    const key = /^has unknown key "(.*)"$/.exec(p.message)?.[1];
    return `${at(p.instancePath, key)}: ${p.instancePath || "/"} ${p.message} (schema ${p.schemaPath})`;
  });
  if (problems.length) return { problems };
  const scenario = { ...value, file, slug: basename(file, ".yaml") } as Scenario;
  problems.push(...checkMeaning(scenario, at));
  return problems.length ? { problems } : { scenario, problems };
}

/** What the schema cannot say: the setup exists, the category is the folder, step ids are unique. */
function checkMeaning(scenario: Scenario, at: (path: string) => string): string[] {
  const problems: string[] = [];
  if (!isSetup(scenario.setup)) {
    problems.push(`${at("/setup")}: /setup "${scenario.setup}" is not a registered setup (known: ${Object.keys(SETUPS).join(", ")})`);
  }
  const folder = basename(dirname(scenario.file));
  if (scenario.category !== folder) {
    problems.push(`${at("/category")}: /category "${scenario.category}" must be the scenario's folder, "${folder}"`);
  }
  const seen = new Set<string>();
  scenario.steps.forEach((step, index) => {
    if (seen.has(step.id)) problems.push(`${at(`/steps/${index}/id`)}: /steps/${index}/id "${step.id}" is used by an earlier step`);
    seen.add(step.id);
    if ((step.run === undefined) === (step.press === undefined)) problems.push(`${at(`/steps/${index}`)}: /steps/${index} needs run (a command) or press (a button), not ${step.run ? "both" : "neither"}`);
    // A press acts: pressed again it would act again.
    if (step.press && step.eventually) problems.push(`${at(`/steps/${index}/eventually`)}: /steps/${index} presses a button, which is never pressed again: no eventually`);
  });
  return problems;
}

/**
 * The 1-based line of the YAML node an instancePath points at, or of its nearest
 * ancestor that exists; with `key`, the line of that key inside the node (an unknown key).
 */
export function lineOf(doc: Document, lines: LineCounter, instancePath: string, key?: string): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  const segments = instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (key !== undefined) segments.push(key);
  for (const segment of segments) {
    const pair = childPair(node, segment);
    if (!pair) break;
    // A map entry points at its key's line (a block value starts on the line after it).
    offset = rangeStart(pair.key) ?? offset;
    node = pair.value;
  }
  return lines.linePos(offset).line;
}

function childPair(node: unknown, segment: string): { key: unknown; value: unknown } | undefined {
  const items = (node as { items?: unknown[] } | undefined)?.items;
  if (!Array.isArray(items)) return undefined;
  if (!items.length || !isPairLike(items[0])) {
    const index = /^\d+$/.test(segment) ? Number(segment) : -1;
    return index >= 0 && index < items.length ? { key: items[index], value: items[index] } : undefined;
  }
  const pair = items.find((item) => isPairLike(item) && String((item.key as { value?: unknown })?.value ?? item.key) === segment);
  return pair as { key: unknown; value: unknown } | undefined;
}

function isPairLike(item: unknown): item is { key: unknown; value: unknown } {
  return typeof item === "object" && item !== null && "key" in item && "value" in item;
}

function rangeStart(node: unknown): number | undefined {
  return (node as Node | null | undefined)?.range?.[0];
}
