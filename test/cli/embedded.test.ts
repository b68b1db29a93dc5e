import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";
import { commandScenario } from "./scenario.js";

// Every command on a database file each invocation opens itself (MQLITE_DB). The test reads the
// same file from this process, as another process sharing it would.
commandScenario({
  name: "embedded, MQLITE_DB",
  async start() {
    const tmp = tempDir("mqlite-cli-db-");
    const file = tmp.file("mq.db");
    const broker = await openBroker(file, { logger: silentLogger });
    return {
      env: { MQLITE_DB: `file:${file}` },
      broker,
      stop: async () => {
        await broker.close();
        tmp.cleanup();
      },
    };
  },
});
