import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { commandText, quoteWord } from "./shell-words.ts";

test("a word is quoted only when a shell needs it", () => {
  assert.is(commandText(["sh", "-c", "echo hi"]), "sh -c 'echo hi'");
  assert.is(quoteWord("it's"), `'it'\\''s'`);
  assert.is(quoteWord("two\nlines"), "'two\nlines'");
});

test("a word with a control character is written $'...' with the character escaped, so showing it cannot drive a terminal", () => {
  assert.is(quoteWord("\x1b[2Jwaiting"), "$'\\x1b[2Jwaiting'");
  assert.is(quoteWord("a'b\\c\rd\x9b"), "$'a\\'b\\\\c\\rd\\u009b'");
  // bash reads it back as the word it was.
  const word = "\x1b]0;pwned\x07 it's \\ done\r";
  const echoed = spawnSync("bash", ["-c", `printf %s ${quoteWord(word)}`], { encoding: "utf8" });
  assert.is(echoed.stdout, word);
});

test.run();
