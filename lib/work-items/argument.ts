/**
 * A work item named on the command line: one parser for the id every verb takes, and one
 * lookup that refuses an id the store does not hold, each with one wording everywhere.
 */
import { withHelp } from "../cli.ts";
import type { CommandDef, ParsedArgs } from "../cli.ts";
import { PreconditionError, UsageError } from "../errors.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "./queries.ts";
import type { WorkItem } from "./queries.ts";

/** Reads a work item id: a positive whole number (`12`); `0`, `-1`, `1x` and an empty word are usage errors. */
export function parseItemId(raw: string | undefined): number {
  const id = /^[1-9]\d*$/.test(raw ?? "") ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw new UsageError(`A work item id is a positive whole number such as 12, got "${raw ?? ""}"`);
  return id;
}

/** A command's `<id>` positional as a work item id; a bad one is a usage error with the command's help. */
export function itemIdArgument(command: CommandDef, args: ParsedArgs): number {
  return withHelp(command, () => parseItemId(args.positionals[0]));
}

/** The refusal for an id no work item has. */
export function noSuchItem(named: number | string): PreconditionError {
  return new PreconditionError(`No work item ${named}; "robot-army status" lists them`);
}

/** The work item with this id; none (or no store yet) is a PreconditionError naming `status`. */
export function requireItem(store: Store | undefined, id: number): WorkItem {
  const item = store ? getItem(store, id) : undefined;
  if (!item) throw noSuchItem(id);
  return item;
}
