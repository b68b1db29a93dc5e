/** The PostgreSQL engine: the `Broker` contract on a database that many nodes share. */

export {
  DEFAULT_SCHEMA,
  isPostgresDsn,
  type PostgresBrokerOptions,
  type PostgresDsn,
  type SynchronousCommit,
} from "./options.js";
export { type PgTransaction, PostgresBroker } from "./postgres-broker.js";
