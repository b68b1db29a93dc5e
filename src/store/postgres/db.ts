import pg from "pg";
import {
  CancelledError,
  ClosedError,
  InternalError,
  MqliteError,
  StorageFullError,
} from "../../contract/errors.js";
import { messageOf } from "../../contract/message-of.js";
import { isConnectionError, isTransientServerError, mapPgError, outcomeUnknown, sqlState } from "./errors.js";

/** A connection inside an operation: every statement is prepared once per connection, by name. */
export interface Conn {
  /** Runs one parameterised statement and returns its rows. */
  q<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Runs `fn` once the transaction committed (never on rollback or retry). */
  afterCommit(fn: () => void): void;
  /** The schema the connection works in (transaction lock keys are scoped by it). */
  readonly schema: string;
}

/** 64-bit integers (ids, epoch-ms times, counts) and numerics come back as JS numbers. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

const NOT_SENT = /not queryable|Client was closed/i;

interface DbOptions {
  connectionString: string;
  schema: string;
  poolSize: number;
  maxRetries: number;
  applicationName: string;
  /** `synchronous_commit` of the pool's sessions (default: the server's). */
  synchronousCommit?: string;
}

/**
 * The pool and the one place that decides what a failure means:
 *
 * - `read`: no effects, so any transient failure is retried.
 * - `tx`: BEGIN … COMMIT. A failure before COMMIT is sent leaves nothing behind (the server rolls
 *   back an unfinished transaction when its connection drops), so it is retried when transient.
 *   A COMMIT the server refused is retried likewise; a COMMIT whose answer never came is
 *   `OutcomeUnknownError`.
 * - `one`: a single autocommit statement (one round trip). A server error means it was rolled back
 *   (retried when transient); a connection that broke after the statement was sent is
 *   `OutcomeUnknownError`.
 */
export class Db {
  readonly pool: pg.Pool;
  private readonly names = new Map<string, string>();
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;

  constructor(private readonly options: DbOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize,
      types,
      application_name: options.applicationName,
      options:
        `-c search_path=${options.schema}` +
        (options.synchronousCommit ? ` -c synchronous_commit=${options.synchronousCommit}` : ""),
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client that loses its connection is dropped by the pool; the error must not crash us.
    this.pool.on("error", () => {});
  }

  /** The connection settings of this pool (for the listening connection), with its own `synchronous_commit`. */
  clientConfig(session: { synchronousCommit?: string } = {}): pg.ClientConfig {
    return {
      connectionString: this.options.connectionString,
      types,
      application_name: this.options.applicationName,
      options:
        `-c search_path=${this.options.schema}` +
        (session.synchronousCommit ? ` -c synchronous_commit=${session.synchronousCommit}` : ""),
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    };
  }

  read<T>(fn: (c: Conn) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.track(() => this.attempts("read", fn, signal));
  }

  tx<T>(fn: (c: Conn) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.track(() => this.noted(this.attempts("tx", fn, signal)));
  }

  one<T>(fn: (c: Conn) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.track(() => this.noted(this.attempts("one", fn, signal)));
  }

  /**
   * The last write's failure when it was the server's storage (out of disk space), rather than the
   * write; cleared by the next write that commits. Readiness reports it.
   */
  storeFailure: StorageFullError | undefined;

  private async noted<T>(write: Promise<T>): Promise<T> {
    try {
      const value = await write;
      this.storeFailure = undefined;
      return value;
    } catch (err) {
      if (err instanceof StorageFullError) this.storeFailure = err;
      throw err;
    }
  }

  /** Stops admitting work and waits for what is in flight. */
  async drain(): Promise<void> {
    this.closed = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Drains, then closes the pool. */
  async close(): Promise<void> {
    await this.drain();
    await this.pool.end();
  }

  private async track<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) throw new ClosedError();
    this.inFlight++;
    try {
      return await run();
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const f of this.idle.splice(0)) f();
    }
  }

  private async attempts<T>(
    mode: "read" | "tx" | "one",
    fn: (c: Conn) => Promise<T>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new CancelledError();
      const outcome = await this.attempt(mode, fn);
      if (outcome.ok) return outcome.value;
      if (!outcome.retry || attempt >= this.options.maxRetries) {
        if (outcome.retry && !(outcome.error instanceof MqliteError)) {
          throw new InternalError(
            `mqlite: postgres unavailable after ${attempt + 1} attempts: ${messageOf(outcome.error)}`,
            { cause: outcome.error },
          );
        }
        throw outcome.error instanceof MqliteError ? outcome.error : mapPgError(outcome.error);
      }
      await sleep(Math.min(500, 10 * 2 ** attempt) * (0.5 + Math.random()));
    }
  }

  private async attempt<T>(
    mode: "read" | "tx" | "one",
    fn: (c: Conn) => Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false; retry: boolean; error: unknown }> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      return { ok: false, retry: true, error: err };
    }
    const after: (() => void)[] = [];
    const conn: Conn = {
      q: async <R>(text: string, values?: unknown[]) => {
        const res = await client.query({ name: this.nameOf(text), text, values });
        return res.rows as R[];
      },
      afterCommit: (f) => after.push(f),
      schema: this.options.schema,
    };
    let broken = false;
    const runAfter = () => {
      for (const f of after) {
        try {
          f();
        } catch {
          // notifications only
        }
      }
    };
    try {
      if (mode === "tx") {
        try {
          await client.query("BEGIN");
        } catch (err) {
          broken = isConnectionError(err);
          return { ok: false, retry: broken || isTransientServerError(err), error: err };
        }
      }
      let value: T;
      try {
        value = await fn(conn);
      } catch (err) {
        broken = isConnectionError(err);
        if (mode === "tx" && !broken) {
          try {
            await client.query("ROLLBACK");
          } catch {
            broken = true;
          }
        }
        if (err instanceof MqliteError) return { ok: false, retry: false, error: err };
        if (mode === "one" && broken && !NOT_SENT.test(messageOf(err))) {
          return { ok: false, retry: false, error: outcomeUnknown(err) };
        }
        // In a transaction nothing was committed; a read has no effects; a server error rolled back.
        return { ok: false, retry: broken || isTransientServerError(err), error: err };
      }
      if (mode === "tx") {
        try {
          await client.query("COMMIT");
        } catch (err) {
          if (sqlState(err) && !isConnectionError(err)) {
            return { ok: false, retry: isTransientServerError(err), error: err };
          }
          broken = true;
          return { ok: false, retry: false, error: outcomeUnknown(err) };
        }
      }
      runAfter();
      return { ok: true, value };
    } finally {
      client.release(broken ? true : undefined);
    }
  }

  /** One prepared-statement name per distinct statement text. */
  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (!name) {
      name = `mq${this.names.size + 1}`;
      this.names.set(text, name);
    }
    return name;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
