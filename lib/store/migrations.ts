/**
 * The store's schema, as forward-only migrations: step N brings a database from
 * `PRAGMA user_version` N-1 to N. Steps are history: never edit one that has shipped,
 * append a new one. Every table is STRICT.
 */
import type { DatabaseSync } from "node:sqlite";
import { PreconditionError } from "../errors.ts";

/** One schema step: what it adds, and the SQL that adds it. */
export interface Migration {
  name: string;
  sql: string;
}

/** Every schema step, oldest first; the database's `user_version` counts those applied. */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: "audit log",
    sql: `
      CREATE TABLE audit (
        id          INTEGER PRIMARY KEY,
        at          TEXT NOT NULL,
        kind        TEXT NOT NULL,
        phase       TEXT NOT NULL CHECK (phase IN ('intent', 'outcome', 'fact')),
        repo        TEXT,
        item        INTEGER,
        session_id  TEXT,
        episode_id  TEXT,
        action_id   TEXT CHECK (phase = 'fact' OR action_id IS NOT NULL),
        simulated   INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
        body        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(body))
      ) STRICT;
      CREATE INDEX audit_by_kind ON audit (kind, id);
      CREATE INDEX audit_by_item ON audit (item, id) WHERE item IS NOT NULL;
      CREATE INDEX audit_by_at ON audit (at);
      -- One intent and one outcome per action; facts may cite an action freely.
      CREATE UNIQUE INDEX audit_by_action ON audit (action_id, phase) WHERE phase IN ('intent', 'outcome');
      CREATE TRIGGER audit_refuses_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit records are append-only: UPDATE refused'); END;
      CREATE TRIGGER audit_refuses_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit records are append-only: DELETE refused'); END;
      CREATE TRIGGER audit_outcome_needs_intent BEFORE INSERT ON audit
        WHEN NEW.phase = 'outcome' AND NOT EXISTS
          (SELECT 1 FROM audit WHERE action_id = NEW.action_id AND phase = 'intent')
        BEGIN SELECT RAISE(ABORT, 'an audit outcome needs the intent of its action'); END;
    `,
  },
  {
    name: "work items, repositories and conditional-request cache",
    sql: `
      CREATE TABLE work_items (
        id               INTEGER PRIMARY KEY,
        repo             TEXT NOT NULL,
        issue            INTEGER NOT NULL,
        state            TEXT NOT NULL CHECK (state IN ('discovered', 'ready', 'dispatching', 'active',
                           'awaiting_review', 'interrupted', 'needs_info', 'failed', 'done', 'abandoned')),
        reason           TEXT,
        title            TEXT NOT NULL,
        body             TEXT NOT NULL,
        author           TEXT NOT NULL,
        labels           TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(labels)),
        issue_state      TEXT NOT NULL,
        issue_updated_at TEXT,
        simulated        INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL
      ) STRICT;
      -- One live item per issue; a finished one may be followed by a new one (a label put back).
      CREATE UNIQUE INDEX work_items_live_issue ON work_items (repo, issue) WHERE state NOT IN ('done', 'abandoned');
      CREATE INDEX work_items_by_state ON work_items (state, repo);
      CREATE TABLE repos (
        name            TEXT PRIMARY KEY,
        path            TEXT NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('onboarded', 'needs_reapproval')),
        fingerprint     TEXT NOT NULL CHECK (json_valid(fingerprint)),
        seen            TEXT CHECK (seen IS NULL OR json_valid(seen)),
        onboarded_at    TEXT NOT NULL,
        updated_at      TEXT NOT NULL
      ) STRICT;
      CREATE TABLE etags (
        url         TEXT PRIMARY KEY,
        etag        TEXT NOT NULL,
        body        TEXT NOT NULL CHECK (json_valid(body)),
        fetched_at  TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    name: "GitHub rate-limit state",
    sql: `
      -- What the last answer from each GitHub (or forge) API said of its rate limit, and
      -- until when robot-army holds its calls back; robot-army status shows it.
      CREATE TABLE github_rate_limit (
        api_base        TEXT PRIMARY KEY,
        rate_limit      INTEGER NOT NULL,
        remaining       INTEGER NOT NULL,
        reset           TEXT NOT NULL,
        deferred_until  TEXT,
        updated_at      TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    name: "dispatch pause and holds",
    sql: `
      -- Durable switches the owner sets (the key 'paused': dispatch stops until unpaused).
      CREATE TABLE controls (
        key     TEXT PRIMARY KEY,
        value   TEXT,
        set_at  TEXT NOT NULL
      ) STRICT;
      -- An item or a whole repository dispatch leaves alone until unheld; one hold each.
      CREATE TABLE holds (
        id      INTEGER PRIMARY KEY,
        item    INTEGER REFERENCES work_items (id),
        repo    TEXT,
        reason  TEXT,
        set_at  TEXT NOT NULL,
        CHECK ((item IS NULL) <> (repo IS NULL))
      ) STRICT;
      CREATE UNIQUE INDEX holds_by_item ON holds (item) WHERE item IS NOT NULL;
      CREATE UNIQUE INDEX holds_by_repo ON holds (repo) WHERE repo IS NOT NULL;
    `,
  },
  {
    name: "worker sessions of work items",
    sql: `
      CREATE TABLE sessions (
        id              TEXT PRIMARY KEY,
        item            INTEGER NOT NULL REFERENCES work_items (id),
        name            TEXT NOT NULL,
        host            TEXT NOT NULL,
        launcher        TEXT NOT NULL,
        marker          TEXT NOT NULL,
        pid             INTEGER,
        pid_started_at  TEXT,
        worktree        TEXT NOT NULL,
        branch          TEXT NOT NULL,
        attempt         INTEGER NOT NULL,
        started_at      TEXT NOT NULL,
        ended_at        TEXT,
        end_reason      TEXT CHECK (end_reason IS NULL OR end_reason IN
                          ('exited', 'crashed', 'killed', 'retired', 'cancelled', 'lost', 'recovered')),
        exit_code       INTEGER,
        simulated       INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1))
      ) STRICT;
      CREATE INDEX sessions_by_item ON sessions (item, started_at);
    `,
  },
  {
    name: "anomalies the owner should see",
    sql: `
      -- A condition the owner should see (lib/store/anomalies.ts), raised once per kind and action.
      CREATE TABLE anomalies (
        id               INTEGER PRIMARY KEY,
        kind             TEXT NOT NULL,
        action_id        TEXT,
        repo             TEXT,
        item             INTEGER,
        detail           TEXT NOT NULL,
        raised_at        TEXT NOT NULL,
        acknowledged_at  TEXT
      ) STRICT;
      CREATE UNIQUE INDEX anomalies_once ON anomalies (kind, action_id) WHERE action_id IS NOT NULL;
      CREATE INDEX anomalies_open ON anomalies (acknowledged_at, id);
      -- The unfinished-effect sweep reads every intent on each tick: only intents, never the whole log.
      CREATE INDEX audit_intents ON audit (id) WHERE phase = 'intent';
    `,
  },
  {
    name: "who labelled each item's issue and edited its body, and the owner's approval of a body",
    sql: `
      -- What GitHub said when last asked (intake, the gate, reset, approve): who last added the
      -- label, who other than the author edited the body, and the hash of the body then; and
      -- the hash of the body the owner approved, which lets an item edited by others start.
      CREATE TABLE issue_trust (
        item             INTEGER PRIMARY KEY REFERENCES work_items (id),
        labelled_by      TEXT,
        edited_by        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(edited_by)),
        body_sha256      TEXT NOT NULL,
        checked_at       TEXT NOT NULL,
        approved_sha256  TEXT,
        approved_at      TEXT
      ) STRICT;
    `,
  },
  {
    name: "keeps and anomalies that resolve",
    sql: `
      -- The owner's "do not end this one" on a work item (lib/ending/keeps.ts): it covers the
      -- item's current session while that runs, never expires, and is released by unkeep only.
      CREATE TABLE keeps (
        item       INTEGER PRIMARY KEY REFERENCES work_items (id),
        placed_at  TEXT NOT NULL
      ) STRICT;
      -- An anomaly the pass resolves itself: retracted (its condition no longer holds) or gone
      -- (the worker died). Raised once per kind and action among the unresolved ones, so the
      -- same condition coming back after a resolution is raised again.
      ALTER TABLE anomalies ADD COLUMN resolved_at TEXT;
      ALTER TABLE anomalies ADD COLUMN resolution TEXT CHECK (resolution IS NULL OR resolution IN ('retracted', 'gone'));
      DROP INDEX anomalies_once;
      CREATE UNIQUE INDEX anomalies_once ON anomalies (kind, action_id) WHERE action_id IS NOT NULL AND resolved_at IS NULL;
    `,
  },
  {
    name: "pull requests of work items, and when each repository's were last refreshed",
    sql: `
      -- The pull requests opened from work items' branches, as GitHub last described them
      -- (lib/intake/pull-requests.ts); an item's are those whose head branch is one of its sessions'.
      CREATE TABLE pull_requests (
        repo         TEXT NOT NULL,
        number       INTEGER NOT NULL,
        head_branch  TEXT NOT NULL,
        head_sha     TEXT NOT NULL,
        state        TEXT NOT NULL CHECK (state IN ('open', 'closed')),
        merged_at    TEXT,
        updated_at   TEXT NOT NULL,
        html_url     TEXT NOT NULL,
        seen_at      TEXT NOT NULL,
        PRIMARY KEY (repo, number)
      ) STRICT;
      CREATE INDEX pull_requests_by_branch ON pull_requests (repo, head_branch);
      -- When GitHub last answered a repository's refresh: an item with no pull request
      -- then is "none"; one never covered by an answer is "not checked".
      CREATE TABLE pull_request_refreshes (
        repo          TEXT PRIMARY KEY,
        refreshed_at  TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    name: "the terminal server each session was launched on, and which sessions' tabs are swept",
    sql: `
      -- Where the worker's tab was opened (lib/boundaries/launchers/types.ts Terminal, JSON): the tab
      -- sweep asks that server, never the one the config names now. Null on rows from before it was recorded.
      ALTER TABLE sessions ADD COLUMN terminal TEXT CHECK (terminal IS NULL OR json_valid(terminal));
      -- When the tab sweep found none of its item's tabs left on any server the item's sessions were
      -- recorded on (lib/ending/tabs.ts); written only after every close's outcome.
      ALTER TABLE sessions ADD COLUMN tabs_swept_at TEXT;
      -- The sweep reads only the rows still to sweep, however many finished items the store holds.
      CREATE INDEX sessions_tabs_unswept ON sessions (item) WHERE tabs_swept_at IS NULL;
    `,
  },
  {
    name: "the episode key and worker profile each worker session was given",
    sql: `
      -- Null for sessions recorded before it: their workers were given item-<id>, read so.
      ALTER TABLE sessions ADD COLUMN episode_key TEXT;
      -- The profile (claude, codex, demo, generic) the worker was started with: its idleness is read
      -- as that profile keeps it, whatever the config says later. Null on older rows: the config's.
      ALTER TABLE sessions ADD COLUMN profile TEXT CHECK (profile IS NULL OR profile IN ('claude', 'codex', 'demo', 'generic'));
      -- Every pass reads the open rows (settle, retirement): only those, however many have closed.
      CREATE INDEX sessions_open ON sessions (item, attempt) WHERE ended_at IS NULL;
    `,
  },
  {
    name: "cleanup decisions: what became of a finished item's worktree and branch",
    sql: `
      -- One row per decision (lib/cleanup/records.ts); the latest row of an item is its cleanup state.
      -- worktree_path and branch stay after a removal, so "what was at this path?" stays answerable.
      CREATE TABLE cleanups (
        id             INTEGER PRIMARY KEY,
        item           INTEGER NOT NULL REFERENCES work_items (id),
        state          TEXT NOT NULL CHECK (state IN ('done', 'branch_retained', 'retained', 'skipped')),
        reason         TEXT NOT NULL,
        worktree_path  TEXT NOT NULL,
        branch         TEXT NOT NULL,
        worktree       TEXT NOT NULL CHECK (worktree IN ('removed', 'absent', 'kept', 'simulated')),
        branch_outcome TEXT NOT NULL CHECK (branch_outcome IN ('deleted', 'absent', 'kept', 'simulated', 'not_attempted')),
        -- How every commit of the branch was proven on the remote, and the tip that was proven.
        proof          TEXT,
        tip            TEXT,
        -- The bundle the branch's commits were written to before it was deleted, and the command restoring it.
        bundle         TEXT,
        restore        TEXT,
        by             TEXT NOT NULL CHECK (by IN ('pass', 'cleanup', 'worktree remove')),
        simulated      INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
        at             TEXT NOT NULL
      ) STRICT;
      CREATE INDEX cleanups_by_item ON cleanups (item, id);
    `,
  },
  {
    name: "the base-branch commit whose agent files the owner approved",
    sql: `
      -- lib/repos/agent-files.ts: "onboard --diff" shows what changed since this commit. Null on rows
      -- approved before agent files were fingerprinted (their fingerprint has no agent_file: keys).
      ALTER TABLE repos ADD COLUMN agent_commit TEXT;
    `,
  },
  {
    name: "settled disk, and the indexes an idle pass reads by",
    sql: `
      -- When the item's latest cleanup record (lib/cleanup/records.ts) is a real one saying its worktree is gone
      -- (done, or branch_retained), the time of that record; else null. The cleanup pass and the disk
      -- anomalies look only at items whose disk is not settled, so finished items cost a pass nothing.
      -- Kept by the triggers below from the records themselves, never written by code: it is always what
      -- worktreeGone(latestCleanup(item)) says, whatever writes or deletes a record.
      ALTER TABLE work_items ADD COLUMN disk_settled_at TEXT;
      -- What each item's latest cleanup record says: settled since its time, or not (null).
      CREATE VIEW disk_settlements AS
        SELECT c.item AS item, CASE WHEN c.simulated = 0 AND c.state IN ('done', 'branch_retained') THEN c.at END AS settled_at
        FROM cleanups AS c WHERE c.id = (SELECT max(id) FROM cleanups WHERE item = c.item);
      UPDATE work_items SET disk_settled_at = (SELECT settled_at FROM disk_settlements WHERE item = work_items.id);
      CREATE TRIGGER cleanups_settle_after_insert AFTER INSERT ON cleanups BEGIN
        UPDATE work_items SET disk_settled_at = (SELECT settled_at FROM disk_settlements WHERE item = NEW.item) WHERE id = NEW.item;
      END;
      CREATE TRIGGER cleanups_settle_after_delete AFTER DELETE ON cleanups BEGIN
        UPDATE work_items SET disk_settled_at = (SELECT settled_at FROM disk_settlements WHERE item = OLD.item) WHERE id = OLD.item;
      END;
      CREATE TRIGGER cleanups_settle_after_update AFTER UPDATE ON cleanups BEGIN
        UPDATE work_items SET disk_settled_at = (SELECT settled_at FROM disk_settlements WHERE item = work_items.id) WHERE id IN (OLD.item, NEW.item);
      END;
      -- The finished items whose disk is not settled, however many are: what the cleanup pass and the disk anomalies read.
      CREATE INDEX work_items_disk_unsettled ON work_items (state) WHERE disk_settled_at IS NULL;
      -- Each item's newest session (the worktree it claims) found, not counted; and the sessions that worked at a
      -- path or below it, which the worktree root's scan asks of settled items only for a folder nothing else claims.
      CREATE INDEX sessions_by_attempt ON sessions (item, attempt);
      CREATE INDEX sessions_by_worktree ON sessions (worktree);
      -- The items done since a time (the pull requests a pass refreshes) found without reading every done item.
      DROP INDEX work_items_by_state;
      CREATE INDEX work_items_by_state ON work_items (state, repo, updated_at);
      -- The intent of an outcome looked up by its action id: the IN lets SQLite take the unique index audit_by_action,
      -- where "phase = 'intent'" alone took audit_intents and read every intent in the log for each outcome written.
      DROP TRIGGER audit_outcome_needs_intent;
      CREATE TRIGGER audit_outcome_needs_intent BEFORE INSERT ON audit
        WHEN NEW.phase = 'outcome' AND NOT EXISTS
          (SELECT 1 FROM audit WHERE action_id = NEW.action_id AND phase IN ('intent', 'outcome') AND phase = 'intent')
        BEGIN SELECT RAISE(ABORT, 'an audit outcome needs the intent of its action'); END;
    `,
  },
  {
    name: "issue claims on GitHub",
    sql: `
      -- Each item's claim on its issue as last seen on GitHub (lib/work-items/issue-claims.ts): the reference
      -- refs/robot-army/claims/<issue> at a commit whose message names the host holding it. mine = 1 when this
      -- store made it (action_id is that claim.create's action, which the commit's message carries); 0 when
      -- another host (or an earlier life of this one) holds it, which keeps the item from starting.
      CREATE TABLE issue_claims (
        item INTEGER PRIMARY KEY REFERENCES work_items (id),
        repo TEXT NOT NULL,
        issue INTEGER NOT NULL,
        ref TEXT NOT NULL,
        sha TEXT NOT NULL,
        host TEXT,
        mine INTEGER NOT NULL,
        action_id TEXT,
        seen_at TEXT NOT NULL,
        released_at TEXT
      ) STRICT;
      -- What the release step reads each pass: the claims this store holds and has not released.
      CREATE INDEX issue_claims_held ON issue_claims (item) WHERE mine = 1 AND released_at IS NULL;
    `,
  },
  {
    name: "hosts seen by their heartbeats",
    sql: `
      -- Each host's heartbeat reference (refs/robot-army/hosts/<host>) in a repository as this store last listed it
      -- (lib/daemon/host-heartbeats.ts): the commit it stood at, when this store first saw it there (so a host is
      -- judged by this machine's clock alone: still at the same commit past the lease is gone), and when it last
      -- listed it. This host's own row holds the commit it wrote last.
      CREATE TABLE hosts_seen (
        repo TEXT NOT NULL,
        host TEXT NOT NULL,
        sha TEXT NOT NULL,
        first_seen_at TEXT NOT NULL,
        checked_at TEXT NOT NULL,
        PRIMARY KEY (repo, host)
      ) STRICT;
    `,
  },
  {
    name: "why GitHub calls are deferred",
    sql: `
      -- 'floor' (too little left: claims and heartbeats may spend the rest), 'used up', or 'slow down' (GitHub's
      -- secondary rate limit); NULL while nothing is deferred, and for a deferral recorded before this column.
      ALTER TABLE github_rate_limit ADD COLUMN deferred_for TEXT CHECK (deferred_for IN ('floor', 'used up', 'slow down'));
    `,
  },
  {
    name: "claims confirmed by a listing",
    sql: `
      -- When GitHub last showed the claim at its commit: read by itself, or in the heartbeat's one listing of every
      -- claim of the repository. An item another host holds is asked about again only once this is a lease old.
      -- NULL: the listing found it moved or gone, so the next pass reads it again.
      ALTER TABLE issue_claims ADD COLUMN checked_at TEXT;
    `,
  },
  {
    name: "feedback for workers, and what blocks an item",
    sql: `
      -- What came back on a work item from its owner or a listed reviewer (lib/intake/feedback.ts): a review of
      -- its pull request, a comment on its lines, a comment on its issue or pull request, a failed check, a
      -- conflict with the base. One row per GitHub id and source, so a piece is taken and given once, across
      -- restarts. body is its text (the owner's or a listed reviewer's, never a stranger's); url where it is
      -- read in full. How it reached the worker (lib/dispatch/feedback-delivery.ts): delivery_action is the
      -- feedback.deliver effect that carries it (set before anything is typed, so one cut short is never typed
      -- again), delivered_at and delivered_how once it is given ('typed', 'resume', 'prompt'), or 'not delivered'
      -- for an item already finished, which shows it and gives it to no one, or 'superseded' for a failed check or a
      -- conflict of a head the pull request has since moved on from.
      CREATE TABLE feedback (
        id INTEGER PRIMARY KEY,
        item INTEGER NOT NULL REFERENCES work_items (id),
        repo TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('review', 'review_comment', 'comment', 'check', 'conflict')),
        github_id TEXT NOT NULL,
        pull_request INTEGER,
        author TEXT NOT NULL,
        what TEXT NOT NULL,
        body TEXT NOT NULL,
        url TEXT NOT NULL,
        created_at TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        delivery_action TEXT,
        delivered_at TEXT,
        delivered_how TEXT CHECK (delivered_how IN ('typed', 'resume', 'prompt', 'not delivered', 'superseded')),
        delivered_session TEXT,
        UNIQUE (repo, source, github_id)
      ) STRICT;
      CREATE INDEX feedback_waiting ON feedback (item) WHERE delivered_at IS NULL;
      -- The pull request's updated_at its reviews were last read at: they are asked again only once it moves.
      ALTER TABLE pull_requests ADD COLUMN reviews_read_for TEXT;
      -- The head whose checks were last found all finished: they are not asked again until the head moves.
      ALTER TABLE pull_requests ADD COLUMN checks_final_for TEXT;
      -- What its mergeability was last known for (its updated_at and its base's tip): asked again once either moves.
      ALTER TABLE pull_requests ADD COLUMN mergeability_read_for TEXT;
      -- How many open issues GitHub's issue dependencies said block the item's issue, as last read (the poll's issue, or
      -- the list of its blockers); NULL: not read yet, asked once. The blocking issues are asked only of an item with
      -- some (lib/intake/dependencies.ts).
      ALTER TABLE work_items ADD COLUMN blocked_by_open INTEGER;
      -- What blocks a ready item, and whether it is open as last asked: GitHub's issue dependencies ('github') and
      -- "blocked by #N" or "depends on #N" in the owner's own words ('text'). An item with an open one waits in ready.
      CREATE TABLE item_blockers (
        item INTEGER NOT NULL REFERENCES work_items (id),
        repo TEXT NOT NULL,
        issue INTEGER NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('github', 'text')),
        state TEXT NOT NULL CHECK (state IN ('open', 'closed', 'unknown')),
        checked_at TEXT NOT NULL,
        PRIMARY KEY (item, repo, issue, source)
      ) STRICT;
    `,
  },
];

/** The schema version a database has (its `PRAGMA user_version`). */
export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number };
  return row.user_version;
}

/**
 * Brings a database forward to the last migration, in one `BEGIN IMMEDIATE`
 * transaction, so two processes opening a fresh store at once migrate it once. A
 * database newer than this code is refused rather than guessed at.
 */
export function migrate(db: DatabaseSync, path: string, migrations: readonly Migration[] = MIGRATIONS): void {
  if (checkVersion(db, path, migrations) === migrations.length) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    // Another process may have migrated while this one waited for the lock.
    for (let version = checkVersion(db, path, migrations); version < migrations.length; version++) {
      db.exec(migrations[version].sql);
      db.exec(`PRAGMA user_version = ${version + 1}`);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

function checkVersion(db: DatabaseSync, path: string, migrations: readonly Migration[]): number {
  const version = schemaVersion(db);
  if (version > migrations.length) {
    throw new PreconditionError(
      `Database "${path}" has schema version ${version}, newer than this robot-army knows (${migrations.length}); upgrade robot-army to read it`,
    );
  }
  return version;
}
