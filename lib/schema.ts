/**
 * JSON Schema validation for every file format robot-army reads (config, scenario,
 * episode, ledger event, ...): each schema in `schema/` has its validator generated ahead
 * of time (`npm run validators` writes `schema/validate/<name>.mjs`), loaded on first use.
 */

/** One way a value breaks its schema. */
export interface SchemaProblem {
  /** JSON pointer into the value, e.g. `/steps/0/expect/exit` (empty for the root). */
  instancePath: string;
  message: string;
  /** Where in the schema the rule is, e.g. `#/properties/steps/items/required`. */
  schemaPath: string;
}

/** Checks a value against one schema and lists what is wrong (empty when it is valid). */
export type Validator = (value: unknown) => SchemaProblem[];

const compiled = new Map<string, Validator>();

/** The validator for `schema/<name>.schema.json`. */
export async function validatorFor(name: string): Promise<Validator> {
  const cached = compiled.get(name);
  if (cached) return cached;
  // ajv's standalone code for the schema (`npm run validators`): nothing is compiled at run time.
  const check = (await import(new URL(`../schema/validate/${name}.mjs`, import.meta.url).href)).validate as ((value: unknown) => boolean) & { errors?: Array<{ instancePath: string; schemaPath: string; keyword: string; params: unknown; message?: string }> | null };
  const validator: Validator = (value) => {
    if (check(value)) return [];
    return (check.errors ?? []).map((error) => ({
      instancePath: error.instancePath,
      schemaPath: error.schemaPath,
      message: error.keyword === "additionalProperties"
        ? `has unknown key "${(error.params as { additionalProperty: string }).additionalProperty}"`
        : error.message ?? "is not valid",
    }));
  };
  compiled.set(name, validator);
  return validator;
}

/** One line for a problem: `/steps/0/exit must be integer`. */
export function describeProblem(problem: SchemaProblem): string {
  return `${problem.instancePath || "/"} ${problem.message}`;
}
