import { silentLogger } from "../../src/engine/logger.js";
import { openBroker } from "../../src/engine/open.js";
import { ManualClock } from "../../src/store/clock.js";
import type { Subject, SubjectOptions } from "./subject.js";

/** The embedded engine on an in-memory database with a manual clock and no background loops. */
export async function embeddedSubject(options: SubjectOptions = {}): Promise<Subject> {
  const clock = new ManualClock();
  const broker = await openBroker(":memory:", {
    clock,
    background: false,
    logger: silentLogger,
    dlqRetention: options.dlqRetention,
    maxMessageBytes: options.maxMessageBytes,
  });
  return {
    broker,
    clock,
    maintain: async () => {
      await broker.runMaintenanceOnce();
    },
    close: () => broker.close(),
  };
}
