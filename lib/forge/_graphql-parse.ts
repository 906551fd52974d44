/**
 * A parser for the GraphQL the forge answers: one query operation (anonymous, or named
 * with variable definitions), fields with aliases, arguments (variables, numbers, strings,
 * booleans, null, enum values and lists of them), selection sets and inline fragments
 * (`... on LabeledEvent { actor { login } }`). Named fragments, directives, mutations and
 * subscriptions are refused with a message, as a server that does not know them would.
 */

/** What a selection set holds: fields, and inline fragments on a type. */
export type Selection = Field | InlineFragment;

/** A field in a selection set. */
export interface Field {
  kind: "field";
  name: string;
  alias?: string;
  args: Record<string, Value>;
  /** Undefined for a scalar. */
  selections?: Selection[];
}

/** `... on Type { ... }`: selections that apply only when the value is of that type. */
export interface InlineFragment {
  kind: "fragment";
  on: string;
  selections: Selection[];
}

/** An argument's value: a variable, a literal (an enum value is a name, unquoted), or a list of values. */
export type Value =
  | { kind: "variable"; name: string }
  | { kind: "literal"; value: unknown }
  | { kind: "enum"; name: string }
  | { kind: "list"; values: Value[] };

type Token = { kind: "punct" | "name" | "number" | "string"; text: string; at: number };

/** Parses a query document into its top-level selections; a SyntaxError says what it could not read. */
export function parseQuery(source: string): Selection[] {
  const tokens = tokenize(source);
  let i = 0;
  const peek = () => tokens[i];
  const fail = (what: string): never => {
    const token = peek();
    throw new SyntaxError(token ? `Parse error on "${token.text}" at offset ${token.at}: ${what}` : `Parse error on end of input: ${what}`);
  };
  const take = (text?: string): Token => {
    const token = peek();
    if (!token || (text !== undefined && token.text !== text)) fail(text ? `expected "${text}"` : "unexpected end");
    i++;
    return token;
  };
  const name = (): string => {
    const token = peek();
    if (token?.kind !== "name") fail("expected a name");
    i++;
    return token.text;
  };

  const value = (): Value => {
    const token = take();
    if (token.text === "$") return { kind: "variable", name: name() };
    if (token.kind === "number") return { kind: "literal", value: Number(token.text) };
    if (token.kind === "string") return { kind: "literal", value: JSON.parse(token.text) };
    if (token.kind === "name" && ["true", "false", "null"].includes(token.text)) return { kind: "literal", value: JSON.parse(token.text) };
    if (token.kind === "name") return { kind: "enum", name: token.text };
    if (token.text === "[") {
      const values: Value[] = [];
      while (peek()?.text !== "]") {
        values.push(value());
        if (peek()?.text === ",") take(",");
      }
      take("]");
      return { kind: "list", values };
    }
    i--;
    return fail("expected a value (input objects are not supported)");
  };

  const selectionSet = (): Selection[] => {
    take("{");
    const fields: Selection[] = [];
    while (peek()?.text !== "}") {
      if (peek()?.text === "...") {
        take("...");
        if (peek()?.text !== "on") fail("named fragments are not supported, only inline fragments (... on Type { ... })");
        take("on");
        const on = name();
        if (peek()?.text === "@") fail("directives are not supported");
        fields.push({ kind: "fragment", on, selections: selectionSet() });
        if (peek()?.text === ",") take(",");
        continue;
      }
      let fieldName = name();
      let alias: string | undefined;
      if (peek()?.text === ":") {
        take(":");
        alias = fieldName;
        fieldName = name();
      }
      const args: Record<string, Value> = {};
      if (peek()?.text === "(") {
        take("(");
        while (peek()?.text !== ")") {
          const arg = name();
          take(":");
          args[arg] = value();
          if (peek()?.text === ",") take(",");
        }
        take(")");
      }
      if (peek()?.text === "@") fail("directives are not supported");
      const field: Field = { kind: "field", name: fieldName, args, ...(alias ? { alias } : {}) };
      if (peek()?.text === "{") field.selections = selectionSet();
      fields.push(field);
      if (peek()?.text === ",") take(",");
    }
    take("}");
    return fields;
  };

  if (peek()?.kind === "name") {
    const operation = name();
    if (operation !== "query") {
      i--;
      fail(`only a query is answered, not "${operation}"`);
    }
    if (peek()?.kind === "name") name();
    if (peek()?.text === "(") {
      // Variable definitions: their types are not checked; a missing variable is caught where it is used.
      let depth = 0;
      do {
        const token = take();
        if (token.text === "(") depth++;
        if (token.text === ")") depth--;
      } while (depth > 0);
    }
  }
  const fields = selectionSet();
  if (peek()) fail("only one operation is answered");
  return fields;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s+|,|#[^\n]*|(\.\.\.|[{}():!$@=\[\]])|([A-Za-z_][A-Za-z0-9_]*)|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|("(?:[^"\\\n]|\\.)*")/y;
  let at = 0;
  while (at < source.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(source);
    if (!match) throw new SyntaxError(`Parse error on "${source[at]}" at offset ${at}`);
    const [text, punct, word, number, string] = match;
    if (text === ",") tokens.push({ kind: "punct", text, at });
    else if (punct) tokens.push({ kind: "punct", text: punct, at });
    else if (word) tokens.push({ kind: "name", text: word, at });
    else if (number) tokens.push({ kind: "number", text: number, at });
    else if (string) tokens.push({ kind: "string", text: string, at });
    at += text.length;
  }
  return tokens;
}
