/**
 * Setup `broken-store-files`: `forge-with-clone` (a forge, a clone, a config), and beside
 * it five state dirs whose store is wrong in one way each:
 * `${AS_DIRECTORY}` (robot-army.db is a folder), `${DANGLING}` (a symbolic link to a file
 * that is gone), `${DAMAGED}` (a real store with garbage written over one of its pages),
 * `${READ_ONLY}` (a real store robot-army may read but not write: mode 0400, or immutable
 * for root) and `${LOST_WAL}` (a store copied while a writer had it open, as a crash leaves
 * it, then its -wal file deleted). A step picks one with `env: { RA_STATE_DIR: ... }`.
 */
import { closeSync, copyFileSync, mkdirSync, openSync, rmSync, symlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openStore, storePath } from "../../store/open.ts";
import type { Store } from "../../store/open.ts";
import { makeReadOnly } from "../../testing/read-only.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Makes the forge, the clone and the five broken state dirs. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  const dirs = {
    AS_DIRECTORY: join(ctx.dir, "as-directory"), DANGLING: join(ctx.dir, "dangling"), DAMAGED: join(ctx.dir, "damaged"),
    READ_ONLY: join(ctx.dir, "read-only"), LOST_WAL: join(ctx.dir, "lost-wal"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });

  mkdirSync(storePath(dirs.AS_DIRECTORY));
  symlinkSync(join(ctx.dir, "moved-away.db"), storePath(dirs.DANGLING));

  await withRecords(dirs.DAMAGED, 400, () => {});
  const fd = openSync(storePath(dirs.DAMAGED), "r+");
  writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096 * 4);
  closeSync(fd);

  await withRecords(dirs.READ_ONLY, 1, () => {});
  const writable = makeReadOnly(storePath(dirs.READ_ONLY));

  // Copied while the writer still has it open: the copy's log holds the last writes, its index says so.
  await withRecords(join(ctx.dir, "live"), 3, () => {
    for (const suffix of ["", "-wal", "-shm"]) copyFileSync(storePath(join(ctx.dir, "live")) + suffix, storePath(dirs.LOST_WAL) + suffix);
  });
  rmSync(`${storePath(dirs.LOST_WAL)}-wal`);

  return {
    ...made,
    vars: { ...made.vars, ...dirs },
    cleanup: async () => {
      writable();
      await made.cleanup?.();
    },
  };
}

/** Opens a store in `stateDir`, writes `count` audit records, runs `whileOpen`, and closes it. */
async function withRecords(stateDir: string, count: number, whileOpen: (store: Store) => void): Promise<void> {
  const store = await openStore(stateDir);
  const insert = store.statement("INSERT INTO audit (at, kind, phase, body) VALUES ('2026-01-15T10:00:00Z', 'scenario.record', 'fact', ?)");
  for (let i = 0; i < count; i++) insert.run(JSON.stringify({ note: "a record written before the store broke", i }));
  whileOpen(store);
  store.close();
}
