import { randomBytes } from "node:crypto";

/** Tokens are cut from a pool of CSPRNG bytes: one `randomBytes` call serves 256 claims. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = POOL_BYTES;

/**
 * A lock token: 32 lowercase hex characters from the CSPRNG (128 bits). randomBytes throws rather
 * than return weak bytes, so there is no fallback.
 */
export function newLockToken(): string {
  if (offset + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const token = pool.toString("hex", offset, offset + 16);
  offset += 16;
  return token;
}
