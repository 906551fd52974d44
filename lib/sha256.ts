/**
 * SHA-256 of text or bytes, hex: the one hash robot-army names things by (agent files, its
 * own episode records, the config text a daemon applied, a token's fingerprint, an issue's
 * words as the owner saw them, a Codex hook's identity, and the sandbox forge's ETags).
 *
 * @example sha256Hex("") // "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
 */
export function sha256Hex(content: string | Uint8Array): string {
  // node:crypto is taken when something is hashed, not when this module is imported: loading it is a
  // tenth of a command's start, and most commands hash nothing.
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(content).digest("hex");
}
