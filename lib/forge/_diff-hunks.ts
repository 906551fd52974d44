/**
 * Where a line of a file sits in that file's unified diff, as GitHub places a review
 * comment: its `position` (the lines below the first `@@` header, each later header
 * counted too) and its `diff_hunk` (the hunk's header down to the line itself).
 */

/** A commented line's place in its file's diff. */
export interface DiffPlace {
  position: number;
  diff_hunk: string;
}

/**
 * The place of `line` of the file in `diff` (one file's `git diff` output): a line of the
 * new file on the RIGHT side (added or unchanged), of the old file on the LEFT (deleted or
 * unchanged); undefined when the diff does not show that line.
 */
export function placeInDiff(diff: string, line: number, side: "LEFT" | "RIGHT"): DiffPlace | undefined {
  const lines = diff.split("\n");
  const first = lines.findIndex((text) => text.startsWith("@@"));
  if (first < 0) return undefined;
  let position = 0;
  let hunk = first;
  let oldLine = 0;
  let newLine = 0;
  for (let i = first; i < lines.length; i++) {
    const text = lines[i];
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (header) {
      if (i > first) position++;
      hunk = i;
      oldLine = Number(header[1]);
      newLine = Number(header[2]);
      continue;
    }
    // "\ No newline at end of file" is git's note, not a line of either file.
    if (text.startsWith("\\")) continue;
    position++;
    let here: number | undefined;
    if (text.startsWith("+")) here = side === "RIGHT" ? newLine : undefined;
    else if (text.startsWith("-")) here = side === "LEFT" ? oldLine : undefined;
    else here = side === "RIGHT" ? newLine : oldLine;
    if (!text.startsWith("+")) oldLine++;
    if (!text.startsWith("-")) newLine++;
    if (here === line) return { position, diff_hunk: lines.slice(hunk, i + 1).join("\n") };
  }
  return undefined;
}
