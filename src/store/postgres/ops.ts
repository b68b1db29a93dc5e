import type { Async, Ops } from "../../core/port.js";

import { PgClaimOps, type PgClaimShared } from "./claim.js";
import type { Conn } from "./db.js";
import { PgDependencyOps } from "./dependencies.js";
import { PgFlowOps } from "./flow-ops.js";
import { PgMaintenanceOps } from "./maintenance.js";
import { PgNamedLockOps } from "./named-locks.js";
import { type PgQueueContext, PgQueueOps } from "./queue-ops.js";
import { PgRecordOps } from "./records.js";
import { type PgSendContext, PgSendOps } from "./send.js";
import { PgSettleOps } from "./settle.js";
import { PgTopicOps } from "./topics.js";
import { PgWorkerOps } from "./workers.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private claimOps: PgClaimOps | undefined;
  private queueOps: PgQueueOps | undefined;
  private topicOps: PgTopicOps | undefined;
  private maintenanceOps: PgMaintenanceOps | undefined;
  private recordOps: PgRecordOps | undefined;
  private flowOps: PgFlowOps | undefined;
  private sendOps: PgSendOps | undefined;

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

  get send(): PgSendOps {
    this.sendOps ??= new PgSendOps(this.c, this.shared);
    return this.sendOps;
  }

  get queues(): PgQueueOps {
    this.queueOps ??= new PgQueueOps(this.c, this.shared);
    return this.queueOps;
  }

  get topics(): PgTopicOps {
    this.topicOps ??= new PgTopicOps(this.c, this.shared.schema, this.shared.subscriptions);
    return this.topicOps;
  }

  get maintenance(): PgMaintenanceOps {
    this.maintenanceOps ??= new PgMaintenanceOps(this.c);
    return this.maintenanceOps;
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

  get dependencies(): PgDependencyOps {
    return new PgDependencyOps(this.c);
  }

  get flows(): PgFlowOps {
    this.flowOps ??= new PgFlowOps(this.c, this.shared.schema);
    return this.flowOps;
  }
}

/** What the statements share across connections: the schema and the node's caches. */
export type PgShared = PgClaimShared & PgQueueContext & PgSendContext;

/** The ops on `c`; `alone`: the verb runs as one autocommit statement, not in a transaction. */
export function pgOps(c: Conn, shared: PgShared, alone = false): PgOps {
  return new ConnectionOps(c, shared, alone);
}
