import { createHash } from "node:crypto";

/** Settlement receipts live this long: an exact replay within it succeeds. */
export const RECEIPT_TTL_MS = 30 * 60 * 1000;

export type SettleOperation = "completed" | "abandoned" | "dead_lettered" | "deferred";

/** The effect-bearing arguments of a settlement, hashed with length-prefixed framing. */
export function receiptArgs(...parts: (string | number)[]): string {
  if (parts.length === 0) return "";
  const h = createHash("sha256");
  for (const p of parts) {
    const s = String(p);
    h.update(`${Buffer.byteLength(s)}:${s}`);
  }
  return h.digest("hex");
}
