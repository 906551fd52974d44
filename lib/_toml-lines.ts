/**
 * TOML key paths for config errors: where each key sits in the text (smol-toml reports no
 * positions for values, so this is a light scan beside the real parse) and how TOML spells
 * a path.
 */

/**
 * Maps each dotted key path to the line that defines it (table headers and `key =`
 * lines). The scan follows strings, multi-line strings and brackets just enough to find
 * where statements start.
 *
 * @example
 * keyLines('[repos."octo-org/widgets"]\npath = "~/src/widgets"\n');
 * // Map { "repos.octo-org/widgets" => 1, "repos.octo-org/widgets.path" => 2 }
 */
export function keyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let table: string[] = [];
  let depth = 0;
  let multiline: string | undefined;
  text.split(/\r?\n/).forEach((line, index) => {
    let rest = line;
    if (multiline) {
      const end = rest.indexOf(multiline);
      if (end === -1) return;
      rest = rest.slice(end + 3);
      multiline = undefined;
    } else if (depth === 0) {
      const header = /^\s*\[\[?(.*?)\]\]?\s*(#.*)?$/.exec(rest);
      if (header) {
        table = parseKeyPath(header[1]) ?? table;
        if (!lines.has(table.join("."))) lines.set(table.join("."), index + 1);
        return;
      }
      const assignment = /^\s*((?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'))*)\s*=/.exec(rest);
      if (!assignment) return;
      const key = [...table, ...(parseKeyPath(assignment[1]) ?? [])].join(".");
      if (!lines.has(key)) lines.set(key, index + 1);
      rest = rest.slice(assignment[0].length);
    }
    ({ depth, multiline } = scanValue(rest, depth));
  });
  return lines;
}

/** The line of the nearest key on the path that the file spells out (array positions fall back to their key). */
export function lineOf(segments: string[], lines: Map<string, number>): number | undefined {
  for (let n = segments.length; n > 0; n--) {
    const line = lines.get(segments.slice(0, n).join("."));
    if (line !== undefined) return line;
  }
  return undefined;
}

/** `worker.args[1]`, `repos."octo-org/widgets".path`: TOML's spelling, brackets for array positions. */
export function displayKey(segments: string[], data: unknown): string {
  let text = "";
  let value = data;
  for (const segment of segments) {
    const name = /^[A-Za-z0-9_-]+$/.test(segment) ? segment : JSON.stringify(segment);
    text += Array.isArray(value) ? `[${segment}]` : `${text ? "." : ""}${name}`;
    value = (value as Record<string, unknown> | undefined)?.[segment];
  }
  return text;
}

function parseKeyPath(text: string): string[] | undefined {
  const parts = [...text.matchAll(/\s*([A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')\s*(\.|$)/g)];
  if (parts.length === 0) return undefined;
  return parts.map(([, part]) => (part.startsWith('"') ? JSON.parse(part) : part.startsWith("'") ? part.slice(1, -1) : part));
}

function scanValue(text: string, depth: number): { depth: number; multiline: string | undefined } {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "#") break;
    if (text.startsWith('"""', i) || text.startsWith("'''", i)) {
      const quote = text.slice(i, i + 3);
      const end = text.indexOf(quote, i + 3);
      if (end === -1) return { depth, multiline: quote };
      i = end + 2;
    } else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "'") {
      i = text.indexOf("'", i + 1);
      if (i === -1) break;
    } else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth = Math.max(0, depth - 1);
  }
  return { depth, multiline: undefined };
}
