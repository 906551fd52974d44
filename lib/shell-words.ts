/** Showing an argv to people as a command line they could paste into a POSIX shell. */

/** Quotes one word for a POSIX shell, only when it needs it. */
export function quoteWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  // A control character inside '...' would reach the terminal showing the line as itself.
  if (CONTROL.test(word)) return `$'${word.replace(/[\\']/g, "\\$&").replace(CONTROLS, ansiEscape)}'`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Control characters but a line break and a tab, which '...' holds harmlessly. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const CONTROLS = new RegExp(CONTROL.source, "g");

/** A control character as `$'...'` writes it: `\r`, else its code (`\x1b`; `\u009b` past ASCII). */
function ansiEscape(char: string): string {
  const code = char.charCodeAt(0);
  return char === "\r" ? "\\r" : (code < 0x80 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`);
}

/**
 * An argv as one shell line.
 * @example commandText(["sh", "-c", "echo hi"]) // `sh -c 'echo hi'`
 */
export function commandText(argv: string[]): string {
  return argv.map(quoteWord).join(" ");
}
