/**
 * GitHub's own OpenAPI description (`@octokit/openapi`) as a judge of answers: an
 * exchange (method, URL, status, headers, body) is matched to the operation the
 * description documents for its method and path, and its status, its body (against that
 * status's schema, `$ref`s resolved) and the headers robot-army relies on are checked.
 *
 * The description is OpenAPI 3.0.3: `nullable: true` is rewritten as "or null" once, and
 * ajv compiles only the schemas an exchange reaches.
 *
 * @example
 * const judge = loadGitHubDescription();
 * const problems = judge.check({ method: "GET", url, status: 200, headers, body });
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv } from "ajv";
import type { ValidateFunction } from "ajv";

/** One request and its answer, as the wire carried them. */
export interface Exchange {
  method: string;
  /** The absolute URL asked for. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The body's text ("" when there was none). */
  body: string;
}

/** The operation an exchange was matched to: `GET /repos/{owner}/{repo}/issues`. */
export interface Operation {
  method: string;
  path: string;
}

/** The description, loaded once, and what it says about an exchange. */
export interface GitHubDescription {
  /** The operation the description documents for a method and an API path (no host, no query), if any. */
  operationOf(method: string, path: string): Operation | undefined;
  /** What is wrong with an exchange, one sentence each; empty when it validates. */
  check(exchange: Exchange, operation: Operation): string[];
}

/**
 * Statuses GitHub answers on any operation, which its REST overview documents rather than
 * each operation: 304 to a conditional GET, 401 for bad credentials, 403 when the rate
 * limit is used up, 400 for an unsupported `X-GitHub-Api-Version`. Their bodies are
 * GitHub's basic error.
 */
const ANY_OPERATION: Record<number, string> = { 304: "GET", 401: "*", 403: "*", 400: "*" };

/** The headers every answer of the REST API carries, which robot-army's rate-limit handling reads. */
const RATE_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-used"];

const ROOT = "https://api.github.com/openapi.json";

type Json = Record<string, any>;

/** Reads GitHub's description for api.github.com from node_modules and prepares its schemas. */
export function loadGitHubDescription(): GitHubDescription {
  const require = createRequire(import.meta.url);
  const file = require.resolve("@octokit/openapi/generated/api.github.com.json");
  const description = JSON.parse(readFileSync(file, "utf8")) as Json;
  if (!String(description.openapi).startsWith("3.0.")) throw new RangeError(`GitHub's description is OpenAPI "${description.openapi}"; this judge reads 3.0`);
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ $id: ROOT, components: { schemas: orNull(description.components.schemas, true) } });
  const templates = Object.keys(description.paths).map((path) => ({ path, parts: path.split("/") }));
  const compiled = new Map<string, ValidateFunction>();

  const resolve = (value: Json): Json => {
    let node = value;
    for (let depth = 0; node?.$ref && depth < 10; depth++) {
      const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(node.$ref) ?? [];
      node = description.components[section]?.[name];
    }
    return node;
  };

  const validator = (key: string, schema: Json): ValidateFunction => {
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile({ $id: `${ROOT}/${encodeURIComponent(key)}`, ...retarget(orNull(schema, false)) });
      compiled.set(key, validate);
    }
    return validate;
  };

  return {
    operationOf(method, path) {
      const parts = path.replace(/\/+$/, "").split("/");
      const lower = method.toLowerCase();
      const candidates = templates.filter((t) => description.paths[t.path][lower] && t.parts.length === parts.length && t.parts.every((part, i) => isParam(part) || part === parts[i]));
      // A literal part beats a parameter where templates overlap (`/issues/comments` over `/issues/{issue_number}`).
      candidates.sort((a, b) => rank(a.parts).localeCompare(rank(b.parts)));
      return candidates[0] && { method: method.toUpperCase(), path: candidates[0].path };
    },

    check(exchange, operation) {
      const problems: string[] = [];
      const op = description.paths[operation.path][operation.method.toLowerCase()] as Json;
      const documented = op.responses[String(exchange.status)];
      const general = ANY_OPERATION[exchange.status];
      let response: Json | undefined;
      if (documented) response = resolve(documented);
      else if (general === "*" || general === exchange.method) response = resolve({ $ref: "#/components/responses/requires_authentication" });
      else problems.push(`status ${exchange.status} is not one the operation documents (${Object.keys(op.responses).join(", ")})`);

      // An error the description names without a body still comes with GitHub's basic error, as every error does.
      const basicError = exchange.status >= 400 ? { $ref: "#/components/schemas/basic-error" } : undefined;
      const schema = (response?.content?.["application/json"]?.schema ?? basicError) as Json | undefined;
      if (exchange.status === 204 || exchange.status === 304) {
        if (exchange.body !== "") problems.push(`a ${exchange.status} answer has a body`);
      } else if (schema) {
        let body: unknown;
        try {
          body = JSON.parse(exchange.body);
        } catch {
          problems.push(`the body is not JSON: ${JSON.stringify(exchange.body.slice(0, 80))}`);
        }
        if (body !== undefined) {
          const validate = validator(`${operation.method} ${operation.path} ${exchange.status}`, schema);
          if (!validate(body)) for (const error of validate.errors ?? []) problems.push(`body${error.instancePath} ${error.message} (${error.schemaPath})`);
        }
        if (!/^application\/json\b/.test(exchange.headers["content-type"] ?? "")) problems.push(`content-type is "${exchange.headers["content-type"]}", not JSON`);
      } else if (response && exchange.body !== "") {
        problems.push(`the status ${exchange.status} documents no body, and one came`);
      }
      problems.push(...headerProblems(exchange));
      return problems;
    },
  };
}

/** The headers robot-army relies on: the rate limit on every answer, an ETag on a GET's 200 and 304, a `Link` GitHub's way. */
function headerProblems(exchange: Exchange): string[] {
  const problems: string[] = [];
  const headers = exchange.headers;
  for (const name of RATE_HEADERS) if (!/^\d+$/.test(headers[name] ?? "")) problems.push(`header ${name} is ${JSON.stringify(headers[name])}, not a whole number`);
  if (headers["x-ratelimit-resource"] !== "core") problems.push(`header x-ratelimit-resource is ${JSON.stringify(headers["x-ratelimit-resource"])}, not "core"`);
  if (exchange.method === "GET" && (exchange.status === 200 || exchange.status === 304)) {
    if (!/^(W\/)?"[^"]+"$/.test(headers.etag ?? "")) problems.push(`header etag is ${JSON.stringify(headers.etag)}, not an entity tag`);
    if (!/\bAuthorization\b/i.test(headers.vary ?? "")) problems.push(`header vary is ${JSON.stringify(headers.vary)}, without Authorization`);
  }
  if (headers.link !== undefined) {
    for (const part of headers.link.split(",")) {
      const match = /^\s*<([^>]+)>;\s*rel="(next|prev|first|last)"\s*$/.exec(part);
      if (!match) problems.push(`header link has a part GitHub would not write: ${JSON.stringify(part)}`);
      // A repository's lists are linked by its id; a list of the user's own (`/user/issues`) by its own path.
      else if (new URL(exchange.url).pathname.startsWith("/user/")) {
        if (new URL(match[1]).pathname !== new URL(exchange.url).pathname) problems.push(`header link's ${match[2]} leaves the user's list: ${match[1]}`);
      } else if (!/^\/repositories\/\d+\//.test(new URL(match[1]).pathname)) problems.push(`header link's ${match[2]} is not in GitHub's /repositories/<id>/ form: ${match[1]}`);
    }
  }
  return problems;
}

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema's "or null" (ajv's own `nullable` needs a
 * `type` beside it and would still refuse null against an `enum`). A copy; `properties`
 * is walked as names, so a property called `nullable` stays one.
 */
function orNull(node: any, isMap: boolean): any {
  if (Array.isArray(node)) return node.map((item) => orNull(item, false));
  if (typeof node !== "object" || node === null) return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (!isMap && key === "nullable") continue;
    copy[key] = orNull(value, !isMap && (key === "properties" || key === "patternProperties"));
  }
  return !isMap && node.nullable === true ? { anyOf: [{ type: "null" }, copy] } : copy;
}

/** A response's schema with its `#/components/...` refs pointed at the one document holding them. */
function retarget(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/components/', `"$ref":"${ROOT}#/components/`));
}

/** The formats GitHub's schemas name, checked for real (cheaply) rather than ignored. */
function addFormats(ajv: Ajv): void {
  const url = (value: string) => URL.canParse(value);
  ajv.addFormat("uri", url);
  ajv.addFormat("uri-template", true);
  ajv.addFormat("email", /^[^@\s]+@[^@\s]+$/);
  ajv.addFormat("date", /^\d{4}-\d{2}-\d{2}$/);
  ajv.addFormat("date-time", (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)));
  ajv.addFormat("int64", { type: "number", validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addFormat("int32", { type: "number", validate: (value: number) => Number.isInteger(value) && Math.abs(value) < 2 ** 31 });
  ajv.addFormat("timestamp", { type: "number", validate: (value: number) => Number.isInteger(value) });
}

function isParam(part: string): boolean {
  return part.startsWith("{") && part.endsWith("}");
}

function rank(parts: string[]): string {
  return parts.map((part) => (isParam(part) ? "1" : "0")).join("");
}
