/** An issue named as people write it, `owner/name#N`: the one spelling every command reads. */

/**
 * `owner/name#N` as its repository and number, or undefined when the text is not one. A
 * number past what is exact (2^53) would answer about another issue, and `.` or `..` is no
 * repository's name, so neither is one.
 */
export function parseIssueRef(text: string): { repo: string; issue: number } | undefined {
  const match = /^([\w.-]+)\/([\w.-]+)#(\d+)$/.exec(text);
  if (!match || [match[1], match[2]].some((part) => /^\.+$/.test(part))) return undefined;
  const issue = Number(match[3]);
  return Number.isSafeInteger(issue) && issue > 0 ? { repo: `${match[1]}/${match[2]}`, issue } : undefined;
}
