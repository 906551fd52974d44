/**
 * The process groups the test tooling started (each test file, each stage of `npm test`, in
 * a group of its own as a shell with job control runs a command): an interrupt of the run
 * (Ctrl-C, SIGTERM) is passed on to every one still running, then the run exits.
 */

/** The process groups running now, by their leader's pid: add one as it starts, delete it as it ends. */
export const running = new Set<number>();

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    for (const pgid of running) {
      try {
        process.kill(-pgid, signal);
      } catch {
        // already gone
      }
    }
    process.exit(signal === "SIGINT" ? 130 : 143);
  });
}
