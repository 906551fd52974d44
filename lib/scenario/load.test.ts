import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseScenario } from "./load.ts";

const VALID = `title: Read the help
category: cli
situation: |
  You want to know what it does.
what_you_run: robot-army --help
setup: empty-dir
given:
  - an empty folder
steps:
  - id: help
    run: [--help]
    note: the overview
    expect:
      exit: 0
      stdout_contains: ["Usage"]
      files_contain:
        ".ai/*.md": ["x"]
then:
  - it prints the overview
outcome: You know the commands.
`;

const FILE = "scenarios/cli/help.yaml";

test("a valid scenario loads with its file and slug", async () => {
  const { scenario, problems } = await parseScenario(VALID, FILE);
  assert.equal(problems, []);
  assert.is(scenario?.file, FILE);
  assert.is(scenario?.slug, "help");
  assert.equal(scenario?.steps[0].run, ["--help"]);
  assert.equal(scenario?.steps[0].expect.files_contain, { ".ai/*.md": ["x"] });
});

test("a wrong type names the file, the line of the value and the schema path", async () => {
  const { scenario, problems } = await parseScenario(VALID.replace("exit: 0", 'exit: "zero"'), FILE);
  assert.is(scenario, undefined);
  assert.equal(problems, [
    `${FILE}:14: /steps/0/expect/exit must be integer (schema #/properties/steps/items/properties/expect/properties/exit/type)`,
  ]);
});

test("an unknown key is reported at the key's own line", async () => {
  const text = VALID.replace("    note: the overview\n", "    note: the overview\n    shell: true\n");
  const { problems } = await parseScenario(text, FILE);
  assert.is(problems.length, 1);
  assert.match(problems[0], /^scenarios\/cli\/help\.yaml:13: \/steps\/0 has unknown key "shell" \(schema #\/properties\/steps\/items\/additionalProperties\)$/);
});

test("a missing field is reported at the object that lacks it", async () => {
  const { problems } = await parseScenario(VALID.replace("      exit: 0\n", ""), FILE);
  assert.is(problems.length, 1);
  assert.match(problems[0], /^scenarios\/cli\/help\.yaml:13: \/steps\/0\/expect must have required property 'exit'/);
});

test("a run given as a shell string is refused", async () => {
  const { problems } = await parseScenario(VALID.replace("run: [--help]", 'run: "robot-army --help"'), FILE);
  assert.match(problems[0], /:11: \/steps\/0\/run must be array/);
});

test("every problem is listed, in flow collections too", async () => {
  const text = VALID.replace("stdout_contains: [\"Usage\"]", "stdout_contains: [1, \"Usage\", 2]").replace("outcome: You", "bogus: 1\noutcome: You");
  const { problems } = await parseScenario(text, FILE);
  assert.equal(problems.map((p) => p.split(" (schema")[0]), [
    `${FILE}:20: / has unknown key "bogus"`,
    `${FILE}:15: /steps/0/expect/stdout_contains/0 must be string`,
    `${FILE}:15: /steps/0/expect/stdout_contains/2 must be string`,
  ]);
});

test("a YAML syntax error is reported with its line", async () => {
  const { problems } = await parseScenario("title: x\nsteps: [\n", FILE);
  assert.is(problems.length, 1);
  assert.match(problems[0], /^scenarios\/cli\/help\.yaml:\d+: /);
});

test("an unknown setup is reported at its line, with the known ones", async () => {
  const { problems } = await parseScenario(VALID.replace("setup: empty-dir", "setup: no-such-setup"), FILE);
  assert.is(problems.length, 1);
  assert.match(problems[0], /^scenarios\/cli\/help\.yaml:6: \/setup "no-such-setup" is not a registered setup \(known: .*empty-dir/);
});

test("the category must be the scenario's folder", async () => {
  const { problems } = await parseScenario(VALID, "scenarios/episodes/help.yaml");
  assert.equal(problems, [`scenarios/episodes/help.yaml:2: /category "cli" must be the scenario's folder, "episodes"`]);
});

test("step ids are unique within a scenario", async () => {
  const text = VALID.replace("then:", "  - id: help\n    run: []\n    expect: { exit: 0 }\nthen:");
  const { problems } = await parseScenario(text, FILE);
  assert.equal(problems, [`${FILE}:18: /steps/1/id "help" is used by an earlier step`]);
});

test("a step runs a command or presses a button, never both nor neither, and a press is never repeated", async () => {
  const both = VALID.replace("then:", "  - id: both\n    run: [status]\n    press: { path: /dispatch/pause }\n    expect: { exit: 0 }\nthen:");
  assert.equal((await parseScenario(both, FILE)).problems, [`${FILE}:18: /steps/1 needs run (a command) or press (a button), not both`]);
  const neither = VALID.replace("then:", "  - id: neither\n    expect: { exit: 0 }\nthen:");
  assert.equal((await parseScenario(neither, FILE)).problems, [`${FILE}:18: /steps/1 needs run (a command) or press (a button), not neither`]);
  const again = VALID.replace("then:", "  - id: again\n    press: { path: /dispatch/pause }\n    eventually: 5\n    expect: { exit: 0 }\nthen:");
  assert.equal((await parseScenario(again, FILE)).problems, [`${FILE}:20: /steps/1 presses a button, which is never pressed again: no eventually`]);
  const press = VALID.replace("then:", "  - id: press\n    press: { path: /items/1/abandon, form: { confirm: \"1\" } }\n    expect: { exit: 0 }\nthen:");
  assert.equal((await parseScenario(press, FILE)).problems, []);
});

test.run();
