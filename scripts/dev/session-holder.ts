/**
 * The detached holder of a managed session (started by `robot-army session run -d` and by
 * gc's respawn, never by hand): `session-holder.ts <root> <id>`. It tells its starter on
 * stdout, in one JSON line, that the command started (or why not), which holds even when
 * the command ends and is reaped at once; a failure of its own goes into the record.
 */
import { isoSeconds, now } from "../../lib/clock.ts";
import { holdSession, update } from "../../lib/sessions/holder.ts";

if (import.meta.main) {
  const [root, id] = process.argv.slice(2);
  try {
    await holdSession(root, id, "log", (outcome) => {
      try {
        process.stdout.write(JSON.stringify(outcome) + "\n");
      } catch {
        // The starter has gone: nobody is waiting for the answer.
      }
    });
  } catch (error) {
    await update(root, id, (r) => ({
      ...r, startError: r.startError ?? `holder failed: ${(error as Error).message}`, exitedAt: r.exitedAt ?? isoSeconds(now()),
      ended: r.ended ?? "failed-to-start",
    })).catch(() => {});
    process.exitCode = 1;
  }
}
