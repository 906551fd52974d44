/**
 * Text from outside (an issue's title or body from GitHub, a comment, a reason a script
 * typed) made safe to print to the owner's terminal: each control character is written as
 * the escape JSON gives it (`\u001b`, `\r`), the form `show` and `status` print titles in,
 * so an escape sequence in a title cannot clear the screen, move the cursor or retitle the
 * window. Text with no control character is printed as it is.
 */

/**
 * The text with every control character escaped; `lines` keeps line breaks (`\r\n` as `\n`)
 * and tabs, for a text shown over several lines (an issue's body, a prompt).
 * @example printable("a\x1b[2Jb") // "a\\u001b[2Jb"
 */
export function printable(text: string, options: { lines?: boolean } = {}): string {
  const controls = options.lines ? /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g : /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
  return (options.lines ? text.replace(/\r\n/g, "\n") : text).replace(controls, escape);
}

/**
 * The text in double quotes as JSON quotes it, with DEL, the C1 controls (U+009B, CSI, among
 * them) and the line separators escaped too, which JSON leaves as they are: for a title on one line.
 * @example quoted("a\u009b2Jb") // "\"a\\u009b2Jb\""
 */
export function quoted(text: string): string {
  return printable(JSON.stringify(text));
}

/** JSON's escape for a C0 control (`\n`, `\u001b`); JSON leaves DEL and the C1 controls as they are, so they get the same `\uXXXX` form. */
function escape(char: string): string {
  const json = JSON.stringify(char).slice(1, -1);
  return json !== char ? json : `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
