/** What `attach` opens: the argv that brings up a work item's worker window, found by its launcher's marker. */
import type { Launcher } from "../boundaries/launchers/types.ts";
import { PreconditionError } from "../errors.ts";
import type { Store } from "../store/open.ts";
import { requireItem } from "../work-items/queries.ts";
import { sessionsOf } from "../work-items/sessions.ts";

/** The argv that opens the item's worker, or why there is none to open. */
export async function attachCommandFor(store: Store | undefined, id: number, launcher: Launcher): Promise<{ argv: string[] | null; message: string }> {
  const item = requireItem(store, id);
  const session = sessionsOf(store!, id).filter((s) => s.ended_at === null).at(-1);
  if (!session) throw new PreconditionError(`Work item ${id} has no running session (state ${item.state})`);
  const argv = await launcher.attachCommand(id);
  if (argv) return { argv, message: "" };
  if (launcher.name === "process") {
    return { argv: null, message: `Work item ${id} runs headless as session ${session.name}; "robot-army session peek ${session.name}" shows its output` };
  }
  throw new PreconditionError(`The ${launcher.name} window of work item ${id} (marker ${session.marker}) cannot be found`);
}
