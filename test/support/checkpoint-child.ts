// Opens a broker on a file (its checkpoint thread starts), sends, prints SENT, and then closes the
// broker or leaves it open; either way the script ends here and the process must exit by itself.
// Usage: checkpoint-child.ts <dbPath> close|leave-open
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";

const [path, mode] = process.argv.slice(2) as [string, string];
const broker = await openBroker(path, { logger: silentLogger });
await broker.createQueue("q");
await broker.send("q", { body: "x".repeat(4096) });
process.stdout.write("SENT\n");
if (mode === "close") await broker.close();
