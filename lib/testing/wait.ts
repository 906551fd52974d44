/**
 * Test helpers for waiting on things another process does: a pause, and a poll that names
 * what it waited for when it gives up. For tests only.
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Answer<T> = T | undefined | null | false;

/** Polls `probe` until it answers something truthy; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Answer<T> | Promise<Answer<T>>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await probe();
    if (answer) return answer;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(20);
  }
}
