import { acquireBroker } from "./broker-pool.js";
import { silentLogger } from "./contract/logger.js";
import type { JobHost } from "./jobs/host.js";

/**
 * The job face's default host: `new Queue({ dbPath })` or `{ dsn }` opens (and shares) a broker
 * picked by location as `openBroker` does, and `queue.dashboard()` serves the console with the
 * HTTP server, loaded on first use.
 */
export const defaultJobHost: JobHost = {
  acquireBroker,
  async serveDashboard(broker, options, periodic) {
    const { defaultConsoleDir, startServer } = await import("./server/index.js");
    const server = await startServer({
      broker,
      port: options.port ?? 6754,
      host: options.host ?? "127.0.0.1",
      tokens: options.tokens ?? [],
      ...(options.insecureAllowRemote !== undefined && { insecureAllowRemote: options.insecureAllowRemote }),
      ...(options.cors !== undefined && { cors: options.cors }),
      ui: { dir: defaultConsoleDir() },
      logger: options.logger ?? silentLogger,
      closeBroker: false,
      graceMs: 2000,
      ...(periodic && { periodic }),
    });
    return { url: `${server.url}/ui/`, apiUrl: server.url, close: () => server.close() };
  },
};
