import type { Async, Ops } from "../../core/port.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { MaintenanceOps } from "../../core/verbs/maintenance.js";
import type { QueueOps } from "../../core/verbs/queues.js";
import type { RecordOps } from "../../core/verbs/records.js";
import type { SendOps } from "../../core/verbs/send.js";
import type { TopicOps } from "../../core/verbs/topics.js";

import { PgClaimOps, type PgClaimShared } from "./claim.js";
import type { Conn } from "./db.js";
import { PgSettleOps } from "./settle.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private claimOps: PgClaimOps | undefined;

  constructor(
    private readonly c: Conn,
    private readonly shared: PgShared,
    private readonly alone: boolean,
  ) {}

  get settle(): PgSettleOps {
    this.settleOps ??= new PgSettleOps(this.c);
    return this.settleOps;
  }

  get claim(): PgClaimOps {
    this.claimOps ??= new PgClaimOps(this.c, this.shared, this.alone);
    return this.claimOps;
  }

  get send(): Async<SendOps> {
    return {};
  }

  get queues(): Async<QueueOps> {
    return {};
  }

  get topics(): Async<TopicOps> {
    return {};
  }

  get maintenance(): Async<MaintenanceOps> {
    return {};
  }

  get records(): Async<RecordOps> {
    return {};
  }

  get flows(): Async<FlowOps> {
    return {};
  }
}

/** What the ops of every connection share (the node's caches, the schema). */
export type PgShared = PgClaimShared;

/** The ops on `c`; `alone`: the verb runs as one autocommit statement, not in a transaction. */
export function pgOps(c: Conn, shared: PgShared, alone = false): PgOps {
  return new ConnectionOps(c, shared, alone);
}
