/**
 * The process that called robot-army. Usually the parent; when bin/robot-army.mjs had to
 * hand over from an older Node to the project's Node 24, the parent is that short-lived
 * wrapper, so the wrapper passes its own parent on. The handover variables are removed
 * here, so nothing robot-army starts inherits them.
 */
const handedOver = process.env.RA_HANDED_OVER === "1" ? Number(process.env.RA_CALLER_PID) : NaN;
delete process.env.RA_HANDED_OVER;
delete process.env.RA_CALLER_PID;

/** The pid of the process that ran this command (an agent's hook, a shell). */
export const CALLER_PID: number = Number.isInteger(handedOver) && handedOver > 1 ? handedOver : process.ppid;
