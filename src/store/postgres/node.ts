import { createHash } from "node:crypto";
import pg from "pg";
import type { Logger } from "../../contract/logger.js";
import type { Db } from "./db.js";
import { SESSION_LOCK, schemaLockId } from "./locks.js";
import { quoteIdent } from "./migrate.js";

/** The NOTIFY channel of a schema's brokers (an identifier of at most 63 bytes). */
export function channelOf(schema: string): string {
  const name = `mqlite.${schema}`;
  return name.length <= 63
    ? name
    : `mqlite.${createHash("sha256").update(schema).digest("hex").slice(0, 32)}`;
}

/** NOTIFY of a list of payloads, in one statement (one transaction). */
export const NOTIFY = "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS t(p)";

export interface NodeEvents {
  /** A notification of the schema's channel (from any node, this one included). */
  notification(payload: string): void;
  /** The listening connection was re-established: notifications may have been missed meanwhile. */
  reconnected(): void;
  /** This node became, or stopped being, the one that runs the background loops. */
  leadership(leader: boolean): void;
}

/**
 * This node's one extra connection: it LISTENs on the schema's channel and, when the node takes part
 * in the election, holds the session advisory lock that makes it the leader. If the node dies, its
 * connection closes, the server releases the lock, and a standby's next attempt takes it. If the
 * connection breaks, the node steps down at once and reconnects.
 */
export class PgNode {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private leader = false;
  private closed = false;
  private busy = false;
  private readonly lockArgs: [number, number];

  constructor(
    private readonly db: Db,
    private readonly channel: string,
    schema: string,
    private readonly elect: boolean,
    private readonly pollMs: number,
    private readonly events: NodeEvents,
    private readonly logger: Logger,
  ) {
    this.lockArgs = [SESSION_LOCK.leader, schemaLockId(schema)];
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** Connects and listens (failing loudly if the server cannot be reached), then starts the election. */
  async start(): Promise<void> {
    await this.connect();
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.db.clientConfig({ synchronousCommit: "off" }));
    let pid = 0;
    client.on("notification", (m) => {
      // This node's own notifications (sent on this connection): its waiters were woken at commit.
      if (m.processId === pid) return;
      if (m.channel === this.channel && m.payload !== undefined) this.events.notification(m.payload);
    });
    const lost = () => this.lost(client);
    client.on("error", lost);
    client.on("end", lost);
    await client.connect();
    try {
      await client.query(`LISTEN ${quoteIdent(this.channel)}`);
      pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.stepDown();
    if (!this.closed) this.logger.warn({}, "lost the listening connection to PostgreSQL; reconnecting");
  }

  private stepDown(): void {
    if (!this.leader) return;
    this.leader = false;
    this.events.leadership(false);
  }

  /** Reconnects when needed; a standby tries to take the leader lock; the leader checks its connection. */
  private async tick(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      if (!this.client) {
        try {
          await this.connect();
        } catch {
          return;
        }
        this.events.reconnected();
      }
      const client = this.client!;
      if (!this.elect) return;
      try {
        if (this.leader) {
          await client.query("SELECT 1");
        } else {
          const { rows } = await client.query<{ ok: boolean }>(
            "SELECT pg_try_advisory_lock($1, $2) AS ok",
            this.lockArgs,
          );
          if (rows[0]?.ok && this.client === client && !this.closed) {
            this.leader = true;
            this.events.leadership(true);
          }
        }
      } catch {
        this.lost(client);
      }
    } finally {
      this.busy = false;
    }
  }

  /**
   * Sends `payloads` on the channel from this connection, so that the node does not hear them back.
   * Its session commits without waiting for the WAL flush: a notification is a wake-up, not data.
   * False when the connection is down (the caller sends them another way).
   */
  async notify(payloads: string[]): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    await client.query({ name: "notify", text: NOTIFY, values: [this.channel, payloads] });
    return true;
  }

  /** Steps down and closes the connection (which releases the leader lock). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.stepDown();
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => {});
  }
}
