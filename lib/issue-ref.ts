/** An issue named as people write it, `owner/name#N`: the one spelling every command reads. */

/** `owner/name#N` as its repository and number, or undefined when the text is not one. */
export function parseIssueRef(text: string): { repo: string; issue: number } | undefined {
  const match = /^([\w.-]+\/[\w.-]+)#(\d+)$/.exec(text);
  return match ? { repo: match[1], issue: Number(match[2]) } : undefined;
}
