/**
 * A scripted stand-in for the OpenAI Responses API, served on 127.0.0.1, so the real Codex
 * CLI can be robot-army's worker in tests with no key and no request leaving the machine.
 *
 * It answers what Codex asks of a provider with `wire_api = "responses"`: `POST
 * /v1/responses`, streamed as server-sent events (`response.created`, the output item's
 * `added`, text `delta` and `done`, then `response.completed`; Codex reads the item from
 * `done` and fails a stream without `completed`), or whole when a request asks for no stream;
 * and `GET /v1/models`, which Codex 0.171 does not ask. Each response request is handed to the test's script,
 * which answers with one turn: text (the turn ends) or one function call (Codex runs the
 * tool and sends its output back in its next request). `{ shell }` is the call of Codex's
 * shell tool, `exec_command`.
 *
 * The same port is also the proxy Codex is given (`HTTPS_PROXY`, `HTTP_PROXY`, with
 * `NO_PROXY` naming loopback): a request Codex would send off the machine arrives here
 * instead, is refused, and is listed in `egress`, so a test can show that nothing left.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { serveLoopback } from "./loopback-api.ts";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { PROJECT_ROOT } from "../runtime.ts";

/** One item of a conversation as Codex sends it: a message, a call of the model's, a call's output. */
export type InputItem = { type?: string; [field: string]: unknown };

/** One response request as Codex sent it: the parts a script reads. */
export interface ResponsesRequest {
  /** Its number among every response request this server answered, from 1. */
  n: number;
  model: string;
  /** Whether Codex offered tools: the worker's own conversation does. */
  withTools: boolean;
  /** The names of the tools Codex offered, as the model would call them. */
  tools: string[];
  /** Every item of the conversation, as sent: instructions, prompts, calls and their outputs. */
  input: InputItem[];
}

/**
 * One turn of the model: text that ends the turn, one call of a tool Codex offered with its
 * arguments, or one shell command (a call of `exec_command`, which runs it in Codex's cwd).
 */
export type ModelTurn = { text: string } | { tool: string; input: Record<string, unknown> } | { shell: string };

/** The script: the turn that answers a request, or a promise of it (a turn held back keeps the worker busy). */
export type ModelScript = (request: ResponsesRequest) => ModelTurn | Promise<ModelTurn>;

/** A running stand-in. */
export interface OpenAiApi {
  /** The base URL Codex is given (its provider's `base_url`): requests go to `<url>/responses`. */
  url: string;
  /** The same address as a proxy URL (`HTTPS_PROXY`): what arrives there was meant for elsewhere. */
  proxy: string;
  /** Every response request answered, in order. */
  requests: ResponsesRequest[];
  /** Every request that tried to leave the machine through the proxy: `CONNECT host:port` or an absolute URL. */
  egress: string[];
  close(): Promise<void>;
}

/**
 * The model Codex is told to use: one in Codex's own catalogue (so it warns of no missing
 * metadata) that is offered plain function tools; Codex offers its newer models their tools
 * only through a JavaScript `exec` tool.
 */
export const CODEX_MODEL = "gpt-5.5";

/** The tool Codex runs shell commands with, and the argument holding the command. */
const SHELL_TOOL = "exec_command";

/** Serves the stand-in on 127.0.0.1 at any free port, answering each response request with `script`. */
export async function serveOpenAiApi(script: ModelScript): Promise<OpenAiApi> {
  const requests: ResponsesRequest[] = [];
  let count = 0;

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await bodyOf(req);
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/v1/models") {
      return json(res, { object: "list", data: [{ id: CODEX_MODEL, object: "model", created: 1_735_689_600, owned_by: "robot-army" }] });
    }
    if (req.method !== "POST" || path !== "/v1/responses") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "invalid_request_error", code: "not_found", message: `${req.method} ${path}` } }));
      return;
    }
    const body = JSON.parse(text || "{}");
    const tools = Array.isArray(body.tools) ? (body.tools as InputItem[]).map((tool) => String(tool.name ?? tool.type)) : [];
    const request: ResponsesRequest = {
      n: ++count, model: typeof body.model === "string" ? body.model : CODEX_MODEL,
      withTools: tools.length > 0, tools, input: Array.isArray(body.input) ? body.input : [],
    };
    requests.push(request);
    const turn = await script(request);
    const id = `resp_scripted_${request.n}`;
    const item = outputItem(turn, request);
    const usage = { input_tokens: Math.ceil(text.length / 4), input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: Math.ceil(text.length / 4) + 5 };
    const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model: request.model, status: "completed", output: [item], usage };
    if (body.stream === false) return json(res, response);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let sequence = 0;
    const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
    event("response.created", { response: { ...response, status: "in_progress", output: [], usage: null } });
    if (item.type === "message") {
      event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
      event("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: (turn as { text: string }).text });
    } else {
      event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", arguments: "" } });
    }
    event("response.output_item.done", { output_index: 0, item });
    event("response.completed", { response });
    res.end();
  }

  const loopback = await serveLoopback(answer, (error) => ({ error: { type: "server_error", code: null, message: String(error) } }));
  return { url: `${loopback.origin}/v1`, proxy: loopback.origin, requests, egress: loopback.egress, close: loopback.close };
}

/** The output item a turn becomes: an assistant message, or a function call Codex will run. */
function outputItem(turn: ModelTurn, request: ResponsesRequest): InputItem {
  if ("text" in turn) {
    return { type: "message", id: `msg_scripted_${request.n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] };
  }
  const [name, input] = "shell" in turn ? [SHELL_TOOL, { cmd: turn.shell }] : [turn.tool, turn.input];
  if (request.withTools && !request.tools.includes(name)) {
    throw new TypeError(`Codex did not offer the tool "${name}" in request ${request.n} (it offered ${request.tools.join(", ")})`);
  }
  return { type: "function_call", id: `fc_scripted_${request.n}`, call_id: `call_scripted_${request.n}`, name, arguments: JSON.stringify(input), status: "completed" };
}

/** The text of every message the user's side sent, in order (prompts, and Codex's own context blocks among them). */
export function userTexts(request: Pick<ResponsesRequest, "input">): string[] {
  return request.input.filter((item) => item.type === "message" && item.role === "user").flatMap((item) => partsOf(item.content))
    .filter((part) => part.type === "input_text" && typeof part.text === "string").map((part) => part.text as string);
}

/** The outputs of the model's calls the conversation holds, oldest first: what each call was answered. */
export function toolResults(request: Pick<ResponsesRequest, "input">): { id: string; text: string }[] {
  return request.input.filter((item) => item.type === "function_call_output" || item.type === "custom_tool_call_output")
    .map((item) => ({ id: String(item.call_id), text: outputText(item.output) }));
}

/** Whether the request's last item answers a call (the model's turn goes on) rather than bringing a new prompt. */
export function answersTool(request: Pick<ResponsesRequest, "input">): boolean {
  const last = request.input.at(-1);
  return last?.type === "function_call_output" || last?.type === "custom_tool_call_output";
}

/** The newest prompt the owner (or the worker's start) gave: the last user text that is not one of Codex's context blocks. */
export function lastPrompt(request: Pick<ResponsesRequest, "input">): string {
  return userTexts(request).filter((text) => !text.trimStart().startsWith("<")).at(-1) ?? "";
}

function partsOf(content: unknown): InputItem[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  return Array.isArray(content) ? content.filter((part): part is InputItem => typeof part === "object" && part !== null) : [];
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  return partsOf(output).map((part) => (typeof part.text === "string" ? part.text : "")).join("\n");
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const encoding = req.headers["content-encoding"];
  if (encoding && encoding !== "identity") throw new TypeError(`Cannot read a request body sent with content-encoding "${encoding}"`);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
}

/** The variable Codex reads its provider's key from: one of its own, so a real `OPENAI_API_KEY` is never sent. */
export const STAND_IN_KEY_VARIABLE = "ROBOT_ARMY_STAND_IN_OPENAI_KEY";

/** A key no account has: Codex sends it as a bearer token, and this one opens nothing. */
export const STAND_IN_API_KEY = "sk-robot-army-scripted-stand-in-not-a-key-0000";

/**
 * The Codex CLI the project pins (devDependency `@openai/codex`): its native binary as the
 * platform's package ships it, which needs no install script.
 */
export function codexBinary(): string {
  const [arch, target] = process.arch === "arm64" ? ["arm64", "aarch64-unknown-linux-musl"] : ["x64", "x86_64-unknown-linux-musl"];
  const binary = join(PROJECT_ROOT, "node_modules", "@openai", `codex-linux-${arch}`, "vendor", target, "bin", "codex");
  if (!existsSync(binary)) throw new PreconditionError(`Codex is not installed at "${binary}": run npm install`);
  return binary;
}

/**
 * A home folder for Codex (`CODEX_HOME` is its `.codex`) whose config makes the stand-in its
 * model provider and turns off what would reach elsewhere: update checks, analytics, feedback,
 * plugin syncing. Returns the variables that make a Codex use it, with every other request sent
 * to the refusing proxy (the interactive Codex still asks raw.githubusercontent.com for an
 * announcement, which is refused there).
 */
export function codexHome(dir: string, api: Pick<OpenAiApi, "url" | "proxy">): Record<string, string> {
  const codexDir = join(dir, ".codex");
  mkdirSync(codexDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(codexDir, "config.toml"), codexConfig(api.url), { mode: 0o600 });
  return {
    HOME: dir, CODEX_HOME: codexDir, [STAND_IN_KEY_VARIABLE]: STAND_IN_API_KEY,
    HTTPS_PROXY: api.proxy, HTTP_PROXY: api.proxy, https_proxy: api.proxy, http_proxy: api.proxy,
    NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost",
  };
}

/**
 * Codex's config.toml for the stand-in at `url`. No retries: a failure of the script shows at
 * once instead of after Codex's backoff. No websockets: the stand-in speaks only HTTP. No
 * app-server daemon: the interactive Codex starts one that outlives it. The move to a newer
 * model noted as already offered, so the interactive Codex opens at its prompt.
 */
export function codexConfig(url: string): string {
  return `model = "${CODEX_MODEL}"
model_provider = "robot-army-stand-in"
check_for_update_on_startup = false

[model_providers.robot-army-stand-in]
name = "robot-army stand-in"
base_url = ${JSON.stringify(url)}
env_key = "${STAND_IN_KEY_VARIABLE}"
wire_api = "responses"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
daemon_auto_start = false

[notice.model_migrations]
"${CODEX_MODEL}" = "gpt-6-sol"
`;
}
