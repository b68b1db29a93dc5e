export type { Broker } from "./broker.js";
export {
  type ConsumeContext,
  type ConsumeHandler,
  type ConsumeOptions,
  type Consumer,
  consume,
  DeadLetterError,
} from "./consume.js";
export * from "./errors.js";
export type * from "./job-service.js";
export type * from "./topic-service.js";
export * from "./types.js";
