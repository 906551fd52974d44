/** Showing an argv to people as a command line they could paste into a POSIX shell. */

/** Quotes one word for a POSIX shell, only when it needs it. */
export function quoteWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * An argv as one shell line.
 * @example commandText(["sh", "-c", "echo hi"]) // `sh -c 'echo hi'`
 */
export function commandText(argv: string[]): string {
  return argv.map(quoteWord).join(" ");
}
