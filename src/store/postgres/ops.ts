import type { Async, Ops } from "../../core/port.js";
import type { ClaimOps } from "../../core/verbs/claim.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { MaintenanceOps } from "../../core/verbs/maintenance.js";
import type { QueueOps } from "../../core/verbs/queues.js";
import type { RecordOps } from "../../core/verbs/records.js";
import type { SendOps } from "../../core/verbs/send.js";

import type { Conn } from "./db.js";
import { PgSettleOps } from "./settle.js";
import type { PgSubscriptions } from "./subscriptions.js";
import { PgTopicOps } from "./topics.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** What every connection's statements share: the schema (lock keys) and the broker's caches. */
export interface PgShared {
  schema: string;
  subscriptions: PgSubscriptions;
}

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private topicOps: PgTopicOps | undefined;

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

  get queues(): Async<QueueOps> {
    return {};
  }

  get topics(): PgTopicOps {
    this.topicOps ??= new PgTopicOps(this.c, this.shared.schema, this.shared.subscriptions);
    return this.topicOps;
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

export function pgOps(c: Conn, shared: PgShared): PgOps {
  return new ConnectionOps(c, shared);
}
