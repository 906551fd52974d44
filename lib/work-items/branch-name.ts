/**
 * The branch a work item's worktree is on: `robot-army/issue-<n>-<slug>`, the slug made
 * from the issue title. Titles are written by anyone who can open an issue, so the slug
 * keeps only ASCII letters and digits: nothing in it can mean anything to git or a shell.
 */

/** The prefix every branch robot-army creates starts with. */
export const BRANCH_PREFIX = "robot-army/";

/** The longest slug, in characters; a longer one is cut at a word boundary. */
export const SLUG_MAX = 40;

/**
 * The branch for an issue: `robot-army/issue-<n>-<slug>`, or `robot-army/issue-<n>` when
 * the title has no letters or digits to make a slug from.
 *
 * @example
 * branchName(42, "Crash: café «menu» won't open!"); // "robot-army/issue-42-crash-cafe-menu-won-t-open"
 */
export function branchName(issue: number, title: string): string {
  if (!Number.isSafeInteger(issue) || issue <= 0) throw new RangeError(`Issue number must be a positive integer, got ${JSON.stringify(issue)}`);
  const slug = titleSlug(title);
  return `${BRANCH_PREFIX}issue-${issue}${slug ? `-${slug}` : ""}`;
}

/** A title as lower-case ASCII words joined by single `-`, at most `SLUG_MAX` characters; "" when nothing is left. */
export function titleSlug(title: string): string {
  const words = String(title)
    .normalize("NFKD")
    .replace(/\p{M}/gu, "") // accents folded: "é" -> "e" + combining mark -> "e"
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  let slug = "";
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > SLUG_MAX) {
      // A first word longer than the limit is cut; later ones end the slug at a word boundary.
      if (!slug) slug = word.slice(0, SLUG_MAX);
      break;
    }
    slug = next;
  }
  return slug;
}
