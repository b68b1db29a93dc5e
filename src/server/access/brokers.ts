import type { Broker } from "../../contract/broker.js";
import type { Logger } from "../../contract/logger.js";
import { guardBroker } from "./guarded-broker.js";
import type { Principal } from "./tokens.js";

/** The guarded broker of each principal, built on first use and kept (principals are fixed at startup). */
export function brokersByPrincipal(broker: Broker, logger: Logger): (principal: Principal) => Broker {
  const guarded = new WeakMap<Principal, Broker>();
  return (principal) => {
    let b = guarded.get(principal);
    if (!b) {
      b = guardBroker(broker, principal, logger);
      guarded.set(principal, b);
    }
    return b;
  };
}
