import { test } from "uvu";
import * as assert from "uvu/assert";
import { printable, quoted } from "./printable.ts";

test("control characters are escaped as JSON escapes them; other text is as it was", () => {
  assert.is(printable("release freeze"), "release freeze");
  assert.is(printable("Ünïcødé ✓ 修复 \"quoted\" back\\slash"), "Ünïcødé ✓ 修复 \"quoted\" back\\slash");
  assert.is(printable("\x1b[2Jcleared"), "\\u001b[2Jcleared");
  assert.is(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  assert.is(printable("\x7f\x9b31m\u2028"), "\\u007f\\u009b31m\\u2028", "DEL, the C1 CSI and a line separator too");
});

test("with lines, line breaks and tabs stay and every other control is escaped", () => {
  assert.is(printable("line 1\r\n\tline 2\x1b]0;pwned\x07\rover\n", { lines: true }), "line 1\n\tline 2\\u001b]0;pwned\\u0007\\rover\n");
});

test("quoted is JSON's quoting with the C1 controls, DEL and the line separators escaped too", () => {
  assert.is(quoted('Fix "it"'), '"Fix \\"it\\""');
  assert.is(quoted("a\u009b2J\x1b[31mb\u0085\x7f\u2029"), '"a\\u009b2J\\u001b[31mb\\u0085\\u007f\\u2029"');
  assert.is(JSON.parse(quoted("a\u009bb")), "a\u009bb", "still JSON: it reads back as the title");
});

test.run();
