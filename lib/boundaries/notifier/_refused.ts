/** A channel's service answered, and did not take the message: its status and what it said. */
export class ChannelRefused extends Error {
  /** The HTTP status the service answered with. */
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "ChannelRefused";
    this.status = status;
  }
}

/** The first few lines of an answer's text, for an error that says what the service said. */
export function answerSnippet(text: string): string {
  const line = text.trim().split("\n").slice(0, 3).join(" ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
