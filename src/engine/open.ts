import { SqliteBroker, type SqliteBrokerOptions } from "./sqlite-broker.js";

/**
 * Opens (creating if needed) the broker stored in one SQLite file, or in memory with `":memory:"`.
 *
 * ```ts
 * const broker = await openBroker("./mq.db");
 * await broker.createQueue("orders");
 * await broker.send("orders", { body: "hello" });
 * const [m] = await broker.receive("orders");
 * await broker.complete("orders", m.seqNumber, m.lockToken!);
 * ```
 */
export async function openBroker(path: string, options: SqliteBrokerOptions = {}): Promise<SqliteBroker> {
  return new SqliteBroker(path, options);
}
