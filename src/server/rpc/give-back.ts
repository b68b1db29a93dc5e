import type { Message } from "../../contract/types.js";
import type { RpcContext } from "./context.js";

/**
 * Locked messages whose answer never reaches the client go back to their queue at once, with their
 * delivery uncounted (`countDelivery: false`), rather than waiting out their lease. A give-back that
 * loses the race to a lease's end or a settle finds the lock gone and changes nothing.
 */
export function giveBackIfUndelivered(
  ctx: RpcContext,
  messages: readonly Message[],
  queueOf: (m: Message) => string,
): void {
  const locked = messages.filter((m) => m.lockToken);
  if (locked.length === 0) return;
  ctx.ifUndelivered(() => {
    for (const m of locked) {
      ctx.broker.abandon(queueOf(m), m.seqNumber, m.lockToken!, { countDelivery: false }).catch(() => {});
    }
  });
}
