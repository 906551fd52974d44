/**
 * What a worker is told of its feedback: one line that can be typed at its prompt (no newline,
 * no control character, at most SEND_LIMIT characters), naming what came from whom, each
 * piece's words quoted and cut short, and the file that holds them in full. The words are the
 * owner's or a listed reviewer's (lib/intake/feedback.ts keeps no one else's); they are quoted
 * as data, so the line is never a command of robot-army's.
 *
 * @example
 * feedbackMessage(item, pieces, 0, file)
 * // 'robot-army: feedback came on … 1) @octocat requested changes on pull request #13: "Rename foo." All of it, in full: the file /…/feedback-….md. Read it, …'
 */
import { ROBOT_ARMY_PROMPT } from "../episodes/hook.ts";
import type { FeedbackRow } from "../intake/feedback.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { SEND_LIMIT } from "./verbs/send.ts";
import { feedbackSection, writePromptFile } from "./prompt.ts";
import { join } from "node:path";

/** The most characters quoted of one piece's words. */
export const QUOTED_LIMIT = 280;

/**
 * Writes the pieces in full, each quoted with who said it and where, in a file of the item's
 * prompt folder (which the worker may read: Claude Code is granted it), named `name`; its path.
 * A piece's link leads to a page strangers may write on too: the file holds only what was taken.
 */
export function writeFeedbackFile(stateDir: string, item: number, name: string, pieces: readonly FeedbackRow[]): string {
  return writePromptFile(join(stateDir, "prompts", `item-${item}`), feedbackSection(pieces).join("\n") + "\n", name);
}

/** The message for `pieces` of the item's feedback, written in full in `file`; `more` pieces wait for a later one. */
export function feedbackMessage(item: Pick<WorkItem, "id" | "repo" | "issue">, pieces: readonly (Pick<FeedbackRow, "author" | "what" | "body"> & { source?: FeedbackRow["source"] })[], more: number, file: string): string {
  const head = `${ROBOT_ARMY_PROMPT}feedback came on your work for ${item.repo}#${item.issue}, from its owner, a reviewer they trust, or GitHub.`;
  const tail = `${more > 0 ? ` ${more} more piece${more === 1 ? "" : "s"} will follow once you are idle again.` : ""} All of it, in full: the file ${file}. Read it, address it, commit and push as before.`;
  let quoteLimit = QUOTED_LIMIT;
  for (;;) {
    const listed = pieces.map((piece, index) => {
      const words = quoted(piece.body, quoteLimit);
      // A check or a conflict is GitHub's word, not a person's.
      const who = piece.source === "check" || piece.source === "conflict" ? "" : `@${oneLine(piece.author, 40)} `;
      return ` ${index + 1}) ${who}${oneLine(piece.what, 120)}${words ? `: ${words}` : ""}`;
    }).join("");
    const message = `${head}${listed}${tail}`;
    if ([...message].length <= SEND_LIMIT || quoteLimit <= 20) return [...message].slice(0, SEND_LIMIT).join("");
    quoteLimit = Math.floor(quoteLimit / 2);
  }
}

/** A piece's words as one quoted line: whitespace runs made one space, control characters dropped, cut to `limit` characters. */
function quoted(text: string, limit: number): string {
  const line = oneLine(text, limit);
  return line === "" ? "" : JSON.stringify(line);
}

/** Text as one printable line of at most `limit` characters (an ellipsis where it was cut). */
function oneLine(text: string, limit: number): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/gu, " ").trim();
  const chars = [...flat];
  return chars.length <= limit ? flat : `${chars.slice(0, limit - 1).join("")}…`;
}
