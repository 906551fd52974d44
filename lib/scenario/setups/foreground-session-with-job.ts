/**
 * Setup `foreground-session-with-job`: an empty folder (`<dir>/work`) and one managed
 * session, `fg`, run in the foreground as a terminal tab runs it: `session run` in a process
 * group made for it here (its holder leads it, its command shares it), whose command
 * (`sh -c 'sleep 30 > job.out 2>&1 & exec sleep 30'`) has left a job running in that group.
 * The group's id becomes `<pgid>` in the output. At the end the group, which this setup made,
 * is sent SIGKILL.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { groupMembers } from "../../processes.ts";
import { robotArmyCommand } from "../setup.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { setup as emptyDir } from "./empty-dir.ts";

/** The session's name; `${SESSION}` names it in the steps. */
const NAME = "fg";

/** Starts the session in a group of its own, as a tab would, and waits until its job runs beside its command. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await emptyDir(ctx);
  const [bin, ...args] = robotArmyCommand(ctx.runtime);
  const argv = [...args, "session", "run", "--name", NAME, "--", "sh", "-c", "sleep 30 > job.out 2>&1 & exec sleep 30"];
  const holder = spawn(bin, argv, { cwd: made.cwd, env: ctx.env, detached: true, stdio: "ignore" });
  const pgid = holder.pid!;
  const cleanup = async () => {
    if (groupMembers(pgid).length === 0) return;
    process.kill(-pgid, "SIGKILL");
    while (groupMembers(pgid).length) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  try {
    const sessions = join(ctx.env.RA_STATE_DIR, "sessions");
    const deadline = Date.now() + 30_000;
    // Its holder, its command and the job: three members, the command on record.
    while (!(groupMembers(pgid).length === 3 && childOnRecord(sessions))) {
      if (holder.exitCode !== null || Date.now() > deadline) throw new Error(`session ${NAME} did not start its command and its job in process group ${pgid}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { ...made, vars: { ...made.vars, SESSION: NAME }, placeholders: { [String(pgid)]: "<pgid>" }, cleanup };
}

/** Whether the session's record names its command's pid yet. */
function childOnRecord(sessions: string): boolean {
  try {
    return readdirSync(sessions).filter((name) => name.endsWith(".json"))
      .some((name) => typeof JSON.parse(readFileSync(join(sessions, name), "utf8")).childPid === "number");
  } catch {
    return false;
  }
}
