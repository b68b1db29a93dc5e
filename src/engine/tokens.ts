import { randomBytes } from "node:crypto";

/**
 * A lock token: 32 lowercase hex characters from the CSPRNG (128 bits). randomBytes throws rather
 * than return weak bytes, so there is no fallback.
 */
export function newLockToken(): string {
  return randomBytes(16).toString("hex");
}
