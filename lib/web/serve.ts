/**
 * The dashboard's listening socket: the app's fetch handler served by node:http through
 * @hono/node-server, on Node and on Deno alike, with a port already in use or an address
 * that cannot be bound said in one line.
 */
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { PreconditionError } from "../errors.ts";
import type { WebEnv } from "./context.ts";

/** A dashboard listening: its address, and how to stop it. */
export interface Listening {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on `bind`:`port` (0: any free port) and resolves once connections are taken. */
export function listen(app: Hono<WebEnv>, bind: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: bind, port }, (info) => {
      server.off("error", refused);
      const host = bind.includes(":") ? `[${bind}]` : bind;
      resolve({
        url: `http://${host}:${info.port}/`,
        port: info.port,
        close: () => new Promise<void>((done) => {
          // Server-sent events hold their connections open: they are ended, not waited for.
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          server.close(() => done());
        }),
      });
    });
    const refused = (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? `port ${port} is in use: give another with --port N or [web] port`
        : error.code === "EADDRNOTAVAIL" ? `${bind} is not an address of this machine`
        : error.code === "EACCES" ? `binding port ${port} needs privileges this user lacks: take a port above 1023`
        : error.message;
      reject(new PreconditionError(`The dashboard cannot listen on ${bind}:${port}: ${why}`));
    };
    server.once("error", refused);
  });
}
