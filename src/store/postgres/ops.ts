import type { Async, Ops } from "../../core/port.js";
import type { ClaimOps } from "../../core/verbs/claim.js";
import type { MaintenanceOps } from "../../core/verbs/maintenance.js";
import type { QueueOps } from "../../core/verbs/queues.js";
import type { RecordOps } from "../../core/verbs/records.js";
import type { SendOps } from "../../core/verbs/send.js";
import type { TopicOps } from "../../core/verbs/topics.js";

import type { Conn } from "./db.js";
import { PgFlowOps } from "./flow-ops.js";
import { PgSettleOps } from "./settle.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private flowOps: PgFlowOps | undefined;

  constructor(
    private readonly c: Conn,
    private readonly schema: string,
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

  get flows(): PgFlowOps {
    this.flowOps ??= new PgFlowOps(this.c, this.schema);
    return this.flowOps;
  }
}

/** `schema` keys the transaction locks (`xactLockKey`). */
export function pgOps(c: Conn, schema: string): PgOps {
  return new ConnectionOps(c, schema);
}
