import { ClosedError, MqliteError } from "../contract/errors.js";
import type { RequestInputOf, ResponseOf, RouteName } from "../wire/index.js";
import { anySignal } from "./signals.js";
import { type ConnectOptions, Transport } from "./transport.js";

/** What every part of the remote client shares: the transport and the long-poll rule. */
export abstract class RemoteBase {
  protected readonly http: Transport;

  constructor(url: string, options: ConnectOptions = {}) {
    this.http = new Transport(url, options);
  }

  /**
   * A long-poll RPC. It ends early with `undefined` (nothing) when the caller's signal aborts, and
   * with `ClosedError` when this client closes, as the embedded engine's long-polls do.
   */
  protected async longPoll<K extends RouteName>(
    name: K,
    body: RequestInputOf<K>,
    callerSignal: AbortSignal | undefined,
  ): Promise<ResponseOf<K> | undefined> {
    const closing = this.http.closing.signal;
    const linked = anySignal(callerSignal ? [callerSignal, closing] : [closing]);
    try {
      return await this.http.call(name, body, linked.signal);
    } catch (err) {
      if (!linked.signal.aborted || err instanceof MqliteError) throw err;
      if (closing.aborted) throw new ClosedError();
      return undefined;
    } finally {
      linked.release();
    }
  }

  /** Closes this client (not the server): refuses new calls, ends long-polls, waits for calls in flight. */
  close(): Promise<void> {
    return this.http.close();
  }
}
