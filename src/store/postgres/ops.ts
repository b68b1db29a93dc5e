import type { Async, Ops } from "../../core/port.js";
import type { ClaimOps } from "../../core/verbs/claim.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { MaintenanceOps } from "../../core/verbs/maintenance.js";
import type { RecordOps } from "../../core/verbs/records.js";
import type { SendOps } from "../../core/verbs/send.js";
import type { TopicOps } from "../../core/verbs/topics.js";

import type { Conn } from "./db.js";
import { type PgQueueContext, PgQueueOps } from "./queue-ops.js";
import { PgSettleOps } from "./settle.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private queueOps: PgQueueOps | undefined;

  constructor(
    private readonly c: Conn,
    private readonly shared: PgShared,
  ) {}

  get settle(): PgSettleOps {
    this.settleOps ??= new PgSettleOps(this.c);
    return this.settleOps;
  }

  get claim(): Async<ClaimOps> {
    return {};
  }

  get send(): Async<SendOps> {
    return {};
  }

  get queues(): PgQueueOps {
    this.queueOps ??= new PgQueueOps(this.c, this.shared);
    return this.queueOps;
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

/** What the statements share across connections: the schema and the node's caches. */
export type PgShared = PgQueueContext;

export function pgOps(c: Conn, shared: PgShared): PgOps {
  return new ConnectionOps(c, shared);
}
