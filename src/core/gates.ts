import { InvalidArgumentError } from "../contract/errors.js";
import type { ClaimGate } from "../contract/job-service.js";

/** How soon a claim held back by a `maxLocked` gate looks again (settlements do not wake it). */
export const GATE_RECHECK_MS = 25;

/** Checks gates for well-formedness (before any write). */
export function validateGates(gates: ClaimGate[] | undefined): void {
  for (const g of gates ?? []) {
    if (typeof g?.subject !== "string" || g.subject === "")
      throw new InvalidArgumentError("mqlite: a gate needs a subject");
    if (g.maxLocked !== undefined && (!Number.isInteger(g.maxLocked) || g.maxLocked < 1))
      throw new InvalidArgumentError("mqlite: gate max_locked must be a positive integer");
    if (g.rate !== undefined) {
      const { limit, intervalMs } = g.rate;
      if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(intervalMs) || intervalMs < 1)
        throw new InvalidArgumentError("mqlite: gate rate needs a positive integer limit and interval");
    }
  }
}
