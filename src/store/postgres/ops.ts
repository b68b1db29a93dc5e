import type { Async, Ops } from "../../core/port.js";
import type { ClaimOps } from "../../core/verbs/claim.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { MaintenanceOps } from "../../core/verbs/maintenance.js";
import type { QueueOps } from "../../core/verbs/queues.js";
import type { RecordOps } from "../../core/verbs/records.js";
import type { TopicOps } from "../../core/verbs/topics.js";

import type { Conn } from "./db.js";
import { type PgSendContext, PgSendOps } from "./send.js";
import { PgSettleOps } from "./settle.js";

type PgOps = { [K in keyof Ops]: Async<Ops[K]> };

/** What the families' statements share across connections: the schema and the node's caches. */
export type PgOpsContext = PgSendContext;

/** The port's statements on one connection (the transaction a verb runs in), made as first asked. */
class ConnectionOps implements PgOps {
  private settleOps: PgSettleOps | undefined;
  private sendOps: PgSendOps | undefined;

  constructor(
    private readonly c: Conn,
    private readonly x: PgOpsContext,
  ) {}

  get settle(): PgSettleOps {
    this.settleOps ??= new PgSettleOps(this.c);
    return this.settleOps;
  }

  get claim(): Async<ClaimOps> {
    return {};
  }

  get send(): PgSendOps {
    this.sendOps ??= new PgSendOps(this.c, this.x);
    return this.sendOps;
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

export function pgOps(c: Conn, x: PgOpsContext): PgOps {
  return new ConnectionOps(c, x);
}
