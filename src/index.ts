/**
 * mqlite: a message broker and job queue whose whole state is one SQLite file.
 * @packageDocumentation
 */
// biome-ignore assist/source/organizeImports: grouped by layer; new exports are appended, not sorted in
export type { Broker } from "./contract/broker.js";
export {
  type ConsumeContext,
  type ConsumeHandler,
  type ConsumeOptions,
  type Consumer,
  consume,
  DeadLetterError,
} from "./contract/consume.js";
export * from "./contract/errors.js";
export * from "./contract/types.js";
export type { DlqBounds } from "./core/dlq-bounds.js";
export type { Logger } from "./contract/logger.js";
export type { MaintenanceResult } from "./core/maintenance-result.js";
export { SqliteBroker, type SqliteBrokerOptions, type Transaction } from "./store/sqlite/sqlite-broker.js";
export { type Clock, ManualClock, systemClock } from "./core/clock.js";
export { parseSyncMode, type SyncMode } from "./store/sqlite/sync-mode.js";
export { VERSION } from "./version.js";

// The served broker and its remote client.
export { type ConnectOptions, connect, RemoteBroker } from "./client/index.js";
export {
  createServerApp,
  defaultConsoleDir,
  type ListenOptions,
  type Principal,
  type RunningServer,
  type ServerOptions,
  type StartServerOptions,
  startServer,
  type TokenEntry,
  type TokenSpec,
  type UiOptions,
  type WhoAmI,
} from "./server/index.js";

// Opening a broker: the storage engine is picked by location (a SQLite file, or postgres://…).
export { type EngineBroker, isPostgresDsn, type OpenOptions, openBroker, type PostgresDsn } from "./open.js";
// The PostgreSQL engine (its driver is loaded only when a postgres:// location is opened).
export type { PgTransaction, PostgresBroker, PostgresBrokerOptions } from "./store/postgres/index.js";

// The job face: tasks, workers, retries, results over any Broker.
export type * from "./contract/job-service.js";
export * from "./jobs/index.js";

// Job topics in the Broker contract (TopicService); the job face's own topic types come with ./jobs.
export type {
  DeclareTopicOptions,
  EngineDeclaredTopic,
  EngineTopicLogStat,
  Delivery,
  LeaseTopicOptions,
  LogSubscribeOptions,
  PublishResult,
  ReadTopicOptions,
  ReapOptions,
  SubscriptionDetails,
  TaskSubscribeOptions,
  TopicBacklog,
  TopicLogMessage,
  TopicService,
} from "./contract/topic-service.js";
