export type { Broker } from "./broker.js";
export * from "./errors.js";
export * from "./types.js";
