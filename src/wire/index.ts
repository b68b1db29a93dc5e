/**
 * The HTTP wire contract: zod schemas of every request and response (snake_case, as the original),
 * their mapping to and from the contract's camelCase types, strict decoding, and the OpenAPI
 * document generated from the same schemas.
 *
 * Decisions where the original leaves room:
 * - Keys are matched case-insensitively, as the original (Go's decoder): `"Queue"` is `queue`, and
 *   of two keys naming one field the later wins. Property names are data and keep their case.
 * - `null` for any request field means "absent", as Go's decoder treats it.
 * - Integers must be safe JavaScript integers (|n| ≤ 2^53−1); larger values are refused (400).
 * - A request body must be a JSON object (`null`, arrays and scalars are 400).
 * @module
 */
export * from "./admin-service.js";
export { decodeBase64, encodeBase64, isStdBase64 } from "./base64.js";
export { decodeRequest } from "./decode.js";
export {
  decodeRequestSliced,
  type ListPreparation,
  prepareList,
  SLICED_DECODE_BYTES,
} from "./decode-sliced.js";
export { ErrorBody, errorFromWire, errorToWire } from "./errors.js";
export * from "./job-flows.js";
export * from "./job-service.js";
export { decodeJsonObject, encodeJson } from "./json.js";
export type { ItemBytes, JsonText } from "./json-shape.js";
export * from "./message.js";
export { hasLargeBody, LARGE_BODY_BYTES, messageJsonBytes } from "./message-bytes.js";
export { openApiDocument, openApiJson } from "./openapi.js";
export { Empty, SettleResponse } from "./primitives.js";
export * from "./queue-config.js";
export * from "./queue-service.js";
export { statsToWire, statusToWire, subscriptionToWire } from "./results.js";
export * from "./routes.js";
export * from "./topic-service.js";
