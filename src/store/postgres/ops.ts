import type { Async, Ops } from "../../core/port.js";
import type { Conn } from "./db.js";
import { PgSettleOps } from "./settle.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;

  constructor(private readonly c: Conn) {}

  get settle(): PgSettleOps {
    this.settleOps ??= new PgSettleOps(this.c);
    return this.settleOps;
  }
}

export function pgOps(c: Conn): PgOps {
  return new ConnectionOps(c);
}
