import type { Async, Ops } from "../../core/port.js";
import type { ClaimOps } from "../../core/verbs/claim.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { QueueOps } from "../../core/verbs/queues.js";
import type { RecordOps } from "../../core/verbs/records.js";
import type { SendOps } from "../../core/verbs/send.js";
import type { TopicOps } from "../../core/verbs/topics.js";

import type { Conn } from "./db.js";
import { PgMaintenanceOps } from "./maintenance.js";
import { PgSettleOps } from "./settle.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private maintenanceOps: PgMaintenanceOps | undefined;

  constructor(private readonly c: Conn) {}

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

  get queues(): Async<QueueOps> {
    return {};
  }

  get topics(): Async<TopicOps> {
    return {};
  }

  get maintenance(): PgMaintenanceOps {
    this.maintenanceOps ??= new PgMaintenanceOps(this.c);
    return this.maintenanceOps;
  }

  get records(): Async<RecordOps> {
    return {};
  }

  get flows(): Async<FlowOps> {
    return {};
  }
}

export function pgOps(c: Conn): PgOps {
  return new ConnectionOps(c);
}
