import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { diskUsage, formatSize } from "./disk-usage.ts";

const blocks = (path: string) => lstatSync(path).blocks * 512;

test("counts the blocks of every file and folder below, and a missing path has no size", () =>
  withTempDir((dir) => {
    const tree = join(dir, "tree");
    mkdirSync(join(tree, "a", "b"), { recursive: true });
    writeFileSync(join(tree, "a", "one.txt"), "x".repeat(10_000));
    writeFileSync(join(tree, "a", "b", "two.txt"), "y".repeat(70_000));
    const expected = [tree, join(tree, "a"), join(tree, "a", "b"), join(tree, "a", "one.txt"), join(tree, "a", "b", "two.txt")].reduce((sum, p) => sum + blocks(p), 0);
    const usage = diskUsage(tree)!;
    assert.equal(usage, { bytes: expected, entries: 5, unreadable: 0 });
    assert.ok(usage.bytes >= 80_000, `${usage.bytes} bytes for 80 000 bytes of files`);
    assert.is(diskUsage(join(dir, "nowhere")), undefined);
  }));

test("a symbolic link costs only itself: the tree it points to is not counted", () =>
  withTempDir((dir) => {
    const big = join(dir, "big");
    mkdirSync(big);
    writeFileSync(join(big, "data"), "z".repeat(200_000));
    const tree = join(dir, "tree");
    mkdirSync(tree);
    symlinkSync(big, join(tree, "link"));
    const usage = diskUsage(tree)!;
    assert.is(usage.entries, 2);
    assert.is(usage.bytes, blocks(tree) + blocks(join(tree, "link")));
    assert.ok(usage.bytes < 200_000);
  }));

test("a folder that cannot be listed is counted as unreadable, never as empty", () =>
  withTempDir((dir) => {
    if (process.getuid?.() === 0) return; // root reads every folder
    const tree = join(dir, "tree");
    mkdirSync(join(tree, "locked"), { recursive: true });
    writeFileSync(join(tree, "locked", "secret"), "s");
    chmodSync(join(tree, "locked"), 0o000);
    try {
      assert.is(diskUsage(tree)!.unreadable, 1);
    } finally {
      chmodSync(join(tree, "locked"), 0o700);
    }
  }));

test("a long walk reports its progress as it goes", () =>
  withTempDir((dir) => {
    const tree = join(dir, "tree");
    mkdirSync(tree);
    for (let i = 0; i < 200; i++) writeFileSync(join(tree, `f${i}`), "x");
    const seen: number[] = [];
    diskUsage(tree, { everyMs: 0, onProgress: (sofar) => seen.push(sofar.entries) });
    assert.ok(seen.length >= 100, `${seen.length} reports`);
    assert.ok(seen.every((n, i) => i === 0 || n > seen[i - 1]));
  }));

test("sizes read in powers of 1024 with one decimal", () => {
  assert.is(formatSize(0), "0 B");
  assert.is(formatSize(1023), "1023 B");
  assert.is(formatSize(1536), "1.5 KiB");
  assert.is(formatSize(12.4 * 1024 * 1024), "12.4 MiB");
  assert.is(formatSize(3 * 1024 ** 3), "3.0 GiB");
});

test.run();
