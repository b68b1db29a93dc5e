export type { Broker } from "./broker.js";
export * from "./errors.js";
export type * from "./job-service.js";
export type * from "./topic-service.js";
export * from "./types.js";
