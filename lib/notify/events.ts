/**
 * Which records of the audit log the owner is told of, and the message each becomes. The
 * audit log is the memory: a notification names the last record it covers (`through`), so a
 * transition is told once, also across a daemon restart, and nothing before the first
 * configured channel is told at all.
 *
 * - `dispatch`: an item `dispatching -> active` (its worker's session confirmed);
 * - `completion`: an item `done`, saying whether its worker was retired;
 * - `failure`: an item `failed` (a start that failed, or a worker that exited 1, 126 or 127),
 *   or `interrupted` because its worker was lost or ended by a signal;
 * - `needs_info`: an item `needs_info` (its worker asks for the owner);
 * - `anomaly`: an anomaly raised.
 *
 * The commands a message suggests for an item or an anomaly that needs the owner are those
 * `status` and the dashboard list for it (lib/work-items/owner-commands.ts).
 */
import type { NotificationEvent } from "../config.ts";
import { printable } from "../printable.ts";
import { latestBodyNumber, queryAudit } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { latestSession } from "../work-items/sessions.ts";
import { ENDED_BY_SIGNAL } from "../work-items/exit-verdict.ts";
import { LOST_REASON } from "../ending/worker-ended.ts";
import type { Message } from "../boundaries/notifier/message.ts";
import { anomalyCommands, itemCommands } from "../work-items/owner-commands.ts";

/** A record the owner may be told of: its event and the message it makes. */
export interface Notifiable {
  /** The audit record's id: a message covering it is `through` it. */
  id: number;
  event: NotificationEvent;
  message: Message;
}

/** The kinds of audit record a notification can come from. */
const SOURCE_KINDS = ["state.work_item", "anomaly.raised"] as const;

/**
 * The last audit record notifications have covered, or null when none was ever told (no
 * channel was configured yet). Each send's intent names the record it covers, and the first
 * pass with a channel writes a `notification.cursor`.
 */
export function notifiedThrough(store: Store, simulated: boolean): number | null {
  return latestBodyNumber(store, ["notification.send", "notification.cursor"], "through", { simulated }) ?? null;
}

/**
 * The records after `afterId` that make notifications, oldest first, each as its event and
 * message, and the newest source record looked at (`lastId`: the cursor may move past what
 * was looked at and not told). `simulated` picks the records of this effect level (an item
 * made below `live` is told as `would notify` only by a daemon below `live`).
 */
export function notifiableSince(store: Store, afterId: number, options: NotifyOptions): { found: Notifiable[]; lastId: number } {
  const records = SOURCE_KINDS.flatMap((kind) => queryAudit(store, { kind, afterId })).sort((a, b) => a.id - b.id);
  const found: Notifiable[] = [];
  for (const record of records) {
    const made = notifiableOf(store, record, options);
    if (made) found.push(made);
  }
  return { found, lastId: records.at(-1)?.id ?? afterId };
}

/** Who tells (this host), of which records (simulated or real), and where the dashboard is (`[web] public_url`, for links). */
export interface NotifyOptions {
  host: string;
  simulated: boolean;
  dashboard?: string;
}

/** The dashboard's page at `path` on the owner's public address, when one is set. */
function pageUrl(options: NotifyOptions, path: string): { url?: string } {
  return options.dashboard ? { url: `${options.dashboard.replace(/\/$/, "")}${path}` } : {};
}

function notifiableOf(store: Store, record: AuditRecord, options: NotifyOptions): Notifiable | undefined {
  if (record.kind === "anomaly.raised") return anomalyOf(record, options);
  if (record.phase !== "fact" || record.item === null || record.repo === null) return undefined;
  if (record.simulated !== options.simulated) return undefined;
  const from = String(record.body.from ?? "");
  const to = String(record.body.to ?? "");
  const reason = typeof record.body.reason === "string" ? record.body.reason : "";
  const item = record.item;
  const at = `${record.repo}#${Number(record.body.issue)}`;
  const session = latestSession(store, item);
  const about = { host: options.host, item, repo: record.repo, issue: Number(record.body.issue), state: to, ...(session ? { session: session.name } : {}) };
  const show = `robot-army show ${item}`;
  const attach = `robot-army attach ${item}`;
  const on = `on ${options.host}`;
  const page = pageUrl(options, `/items/${item}`);
  const make = (event: NotificationEvent, title: string, lines: string[], commands: string[]): Notifiable => ({
    id: record.id, event,
    message: {
      kind: event, title: `robot-army: ${title}`, urgency: "normal", about, commands, ...page,
      text: [...lines, ...commands.map((c) => `run: ${c}${c === attach ? ` (${on})` : ""}`), ...(page.url ? [`open: ${page.url}`] : [])].join("\n"),
    },
  });
  if (to === "active" && from === "dispatching") {
    return make("dispatch", `${at} dispatched (item ${item})`, [`item ${item} (${at}) is active ${on}${session ? `, in session ${session.name}` : ""}`], [attach, show]);
  }
  if (to === "done") {
    const retired = session?.end_reason === "retired";
    const worker = !session ? "" : retired ? `; its worker ${session.name} was retired` : session.ended_at === null ? `; its worker ${session.name} still runs` : "";
    return make("completion", `${at} done (item ${item})`, [`item ${item} (${at}) is done ${on}${worker}`], [show]);
  }
  if (to === "failed") {
    return make("failure", `${at} failed (item ${item})`, [`item ${item} (${at}) failed ${on}: ${reason}`], itemCommands("failed", item));
  }
  if (to === "interrupted" && (reason === LOST_REASON || reason.startsWith(ENDED_BY_SIGNAL))) {
    return make("failure", `${at} lost its worker (item ${item})`, [`item ${item} (${at}) is interrupted ${on}: ${reason}`], itemCommands("interrupted", item));
  }
  if (to === "interrupted" && from === "needs_info") {
    return make("failure", `${at} stopped waiting for you (item ${item})`, [`item ${item} (${at}) is interrupted ${on}: ${reason}; its worker ended while it waited for you`], itemCommands("interrupted", item));
  }
  if (to === "needs_info") {
    return make("needs_info", `${at} needs you (item ${item})`, [`item ${item} (${at}) needs you ${on}: ${reason}`], itemCommands("needs_info", item));
  }
  return undefined;
}

/**
 * An anomaly raised: its kind and number, never its detail (outside text: a path, git's words).
 * One about a repository's agent files names the files (paths in the repository, escaped) and
 * the two commands that review and approve them. One about a config the daemon refused says
 * why, as the daemon's own line does (the owner's file, its key and line; escaped).
 */
function anomalyOf(record: AuditRecord, options: NotifyOptions): Notifiable {
  const host = options.host;
  const page = pageUrl(options, record.item !== null ? `/items/${record.item}` : "/anomalies");
  const kind = String(record.body.kind ?? "anomaly");
  const where = record.repo ? ` (${record.repo}${record.item !== null ? `, item ${record.item}` : ""})` : "";
  const agentFiles = kind === "agent_files_changed" && record.repo !== null;
  // What helps, as status and the dashboard list it under "needs you".
  const commands = anomalyCommands({ id: Number(record.body.anomaly), kind, repo: record.repo, item: record.item });
  const files = agentFiles && Array.isArray(record.body.files) ? record.body.files.map((f) => printable(String(f))) : [];
  const named = files.length > 5 ? [...files.slice(0, 5), `and ${files.length - 5} more`] : files;
  const lines = [
    `anomaly ${Number(record.body.anomaly)} (${kind}) raised on ${host}${where}`,
    ...(agentFiles ? [`agent files changed on its base branch: ${named.join(", ") || "never approved"}; nothing is dispatched to it until you approve them`] : []),
    ...(kind === "config_refused" && typeof record.body.detail === "string" ? [printable(record.body.detail)] : []),
  ];
  return {
    id: record.id, event: "anomaly",
    message: {
      kind: "anomaly", title: `robot-army: anomaly ${kind}${where}`, urgency: "normal",
      text: [...lines, ...commands.map((c) => `run: ${c}`), ...(page.url ? [`open: ${page.url}`] : [])].join("\n"),
      about: { host, anomaly: kind, ...(record.repo ? { repo: record.repo } : {}), ...(record.item !== null ? { item: record.item } : {}) },
      commands, ...page,
    },
  };
}
