/**
 * Test helpers for promises that must reject: the error itself, or the error checked for
 * its type and message. For tests only (it asserts with uvu).
 */
import * as assert from "uvu/assert";

/** The error `promise` rejects with; fails if it fulfils instead. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("Expected a rejection");
}

/** Asserts `promise` rejects with a `type` whose message matches every fragment (text it contains, or a pattern). */
export async function rejects(promise: Promise<unknown>, type: Function, ...fragments: Array<string | RegExp>): Promise<Error> {
  const error = await rejection(promise).catch(() => assert.unreachable(`expected a ${type.name}`) as never);
  assert.instance(error, type);
  for (const fragment of fragments) assert.match(error.message, fragment);
  return error;
}
