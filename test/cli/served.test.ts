import { serveInProcess, TOKEN } from "./harness.js";
import { commandScenario } from "./scenario.js";

// Every command against a broker served in this process, named by the environment.
commandScenario({
  name: "served, MQLITE_ENDPOINT + MQLITE_TOKEN",
  async start() {
    const served = await serveInProcess();
    return {
      env: { MQLITE_ENDPOINT: served.url, MQLITE_TOKEN: TOKEN },
      broker: served.broker,
      stop: () => served.close(),
    };
  },
});
