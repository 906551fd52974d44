/**
 * Times in the owner's own zone. robot-army records and compares every time in UTC
 * (`2026-01-15T10:00:00Z`), and `--json` prints them so; text for a person at a terminal
 * shows each such time in the local zone instead, with the zone's name
 * (`2026-01-15 11:00:00 CET`), unless `--utc` asks for UTC. A time whose local reading is
 * UTC's own (a machine on UTC) is left as it is. Output piped to a file or a program keeps
 * UTC too, so what scripts read never depends on the machine's zone.
 */

/** An ISO time in UTC as robot-army writes one, seconds and milliseconds optional. */
const UTC_TIME = /\b(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?Z\b/g;

let formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? "";
  let format = formats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone, timeZoneName: "short", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
    });
    if (formats.size > 8) formats = new Map();
    formats.set(key, format);
  }
  return format;
}

/**
 * Every UTC time in `text` as the zone reads it (default: this machine's): `2026-01-15 11:00:00 CET`,
 * or `2026-01-15 11:00 CET` when the time was written without seconds; left as it is where the zone is UTC.
 * @example inLocalTime("since 2026-01-15T10:00:00Z", "Europe/Paris") // "since 2026-01-15 11:00:00 CET"
 */
export function inLocalTime(text: string, timeZone?: string): string {
  return text.replace(UTC_TIME, (whole, _y, _mo, _d, _h, _mi, seconds: string | undefined) => {
    const at = new Date(whole);
    if (Number.isNaN(at.getTime())) return whole;
    const parts = Object.fromEntries(formatFor(timeZone).formatToParts(at).map((p) => [p.type, p.value]));
    const wall = `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}${seconds === undefined ? "" : `:${parts.second}`}`;
    const utc = whole.slice(0, 10) + " " + whole.slice(11, seconds === undefined ? 16 : 19);
    return wall === utc ? whole : `${wall} ${parts.timeZoneName}`;
  });
}
