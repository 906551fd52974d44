import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { withTempDir } from "./fixtures.ts";
import { answersTool, codexBinary, codexHome, lastPrompt, serveOpenAiApi, toolResults } from "./openai-api.ts";
import type { ModelScript, OpenAiApi } from "./openai-api.ts";

/** The pinned Codex, or why these tests are skipped: only its absence skips them. */
const codex = (() => {
  try {
    return codexBinary();
  } catch (error) {
    if (!(error instanceof PreconditionError)) throw error;
    console.log(`openai-api.test.ts: the tests that run Codex are skipped: ${error.message}`);
    return undefined;
  }
})();
const withCodex = codex ? test : test.skip;

/** Runs `codex exec <prompt>` in `cwd`, its model the stand-in answering with `script`; resolves when Codex exits. */
async function codexExec(script: ModelScript, cwd: string, prompt: string, fn: (run: { code: number | null; stdout: string; stderr: string }, api: OpenAiApi) => void): Promise<void> {
  const api = await serveOpenAiApi(script);
  try {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...codexHome(join(cwd, "home"), api) };
    // The bypass runs commands unsandboxed: Codex's bubblewrap needs user namespaces, which a CI container may not give.
    const args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--color", "never", "-C", join(cwd, "work"), prompt];
    const child = spawn(codex!, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(timer);
    fn({ code, stdout, stderr }, api);
  } finally {
    await api.close();
  }
}

/** Runs `fn` in a fresh temp dir holding an empty `work` folder for Codex; Codex's home goes beside it. */
function inWork(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return () => withTempDir(async (dir) => {
    mkdirSync(join(dir, "work"));
    await fn(dir);
  });
}

withCodex("codex exec prints the stand-in's text answer, asked with the prompt it was given and its shell tool offered", inWork(async (dir) => {
  await codexExec(() => ({ text: "Hello from the stand-in." }), dir, "say hello", (run, api) => {
    assert.is(run.code, 0, run.stderr);
    assert.is(run.stdout, "Hello from the stand-in.\n");
    assert.is(api.requests.length, 1);
    assert.is(lastPrompt(api.requests[0]), "say hello");
    assert.is(api.requests[0].model, "gpt-5.5");
    assert.ok(api.requests[0].tools.includes("exec_command"), api.requests[0].tools.join(", "));
    assert.equal(api.egress, []);
  });
}));

withCodex("a scripted shell call runs in Codex's folder, its output comes back in the next request, and text ends the turn", inWork(async (dir) => {
  const script: ModelScript = (request) => answersTool(request) ? { text: "Wrote f.txt." } : { shell: "echo hi > f.txt && echo written" };
  await codexExec(script, dir, "write f.txt", (run, api) => {
    assert.is(run.code, 0, run.stderr);
    assert.is(run.stdout, "Wrote f.txt.\n");
    assert.is(readFileSync(join(dir, "work", "f.txt"), "utf8"), "hi\n");
    assert.is(api.requests.length, 2);
    assert.equal(toolResults(api.requests[0]), []);
    const [result] = toolResults(api.requests[1]);
    assert.is(result.id, "call_scripted_1");
    assert.match(result.text, /Process exited with code 0/);
    assert.match(result.text, /Output:\nwritten\n/);
    assert.equal(api.egress, [], "Codex asked for nothing beyond the stand-in");
  });
}));

test("the stand-in's port refuses what is sent through it as a proxy, and lists it in egress", async () => {
  const api = await serveOpenAiApi(() => ({ text: "unused" }));
  try {
    const { port } = new URL(api.proxy);
    const status = (method: string, path: string) => new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, method, path });
      req.on("response", (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.on("connect", (res, socket) => (socket.destroy(), resolve(res.statusCode ?? 0)));
      req.on("error", reject);
      req.end();
    });
    assert.is(await status("CONNECT", "api.openai.com:443"), 403);
    assert.is(await status("GET", "http://example.com/update"), 403);
    assert.equal(api.egress, ["CONNECT api.openai.com:443", "GET http://example.com/update"]);
    assert.equal(api.requests, []);
  } finally {
    await api.close();
  }
});

test.run();
