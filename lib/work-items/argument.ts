/**
 * A work item named on the command line: one parser for the id every verb takes, with one
 * wording everywhere (the lookup that refuses an unknown id is requireItem in queries.ts).
 */
import { withHelp } from "../cli.ts";
import type { CommandDef, ParsedArgs } from "../cli.ts";
import { UsageError } from "../errors.ts";

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
