/** Typed errors that the top-level catch in `lib/cli.ts` maps to exit codes. */

/** Exit codes used by every command. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  precondition: 3,
  checkFailed: 4,
} as const;

/** An expected failure: printed as one line on stderr, never with a stack trace. */
export class RobotArmyError extends Error {
  exitCode: number;
  constructor(message: string, exitCode: number = EXIT.failed) {
    super(message);
    this.name = "RobotArmyError";
    this.exitCode = exitCode;
  }
}

/** The command line was wrong: the command's help follows the message on stderr. */
export class UsageError extends RobotArmyError {
  /** The help of the command that was misused, printed after the message. */
  help: string | undefined;
  constructor(message: string, help?: string) {
    super(message, EXIT.usage);
    this.name = "UsageError";
    this.help = help;
  }
}

/** Something the command needs is not so (no repository, key already open, ...). */
export class PreconditionError extends RobotArmyError {
  constructor(message: string) {
    super(message, EXIT.precondition);
    this.name = "PreconditionError";
  }
}

/** A check ran and found a difference (stale catalogue, config drift, ...). */
export class CheckFailedError extends RobotArmyError {
  constructor(message: string) {
    super(message, EXIT.checkFailed);
    this.name = "CheckFailedError";
  }
}
