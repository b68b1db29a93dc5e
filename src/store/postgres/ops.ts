import type { Async, Ops } from "../../core/port.js";
import type { ClaimOps } from "../../core/verbs/claim.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { MaintenanceOps } from "../../core/verbs/maintenance.js";
import type { QueueOps } from "../../core/verbs/queues.js";
import type { SendOps } from "../../core/verbs/send.js";
import type { TopicOps } from "../../core/verbs/topics.js";

import type { Conn } from "./db.js";
import { PgNamedLockOps } from "./named-locks.js";
import { PgRecordOps } from "./records.js";
import { PgSettleOps } from "./settle.js";
import { PgWorkerOps } from "./workers.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private recordOps: PgRecordOps | undefined;

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

  get maintenance(): Async<MaintenanceOps> {
    return {};
  }

  get records(): PgRecordOps {
    this.recordOps ??= new PgRecordOps(this.c);
    return this.recordOps;
  }

  get workers(): PgWorkerOps {
    return new PgWorkerOps(this.c);
  }

  get locks(): PgNamedLockOps {
    return new PgNamedLockOps(this.c);
  }

  get flows(): Async<FlowOps> {
    return {};
  }
}

export function pgOps(c: Conn): PgOps {
  return new ConnectionOps(c);
}
