// The transactional outbox: the application's own row and the message commit together or not at all.
import { openBroker } from "mqlite";

const broker = await openBroker(":memory:");
await broker.createQueue("emails");
await broker.tx(({ db }) => db.exec("CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, email TEXT)"));

await broker.tx(({ db, send }) => {
  const { lastInsertRowid } = db.prepare("INSERT INTO users (email) VALUES (?)").run("ada@example.com");
  send("emails", { body: `welcome user ${lastInsertRowid}` });
});

try {
  await broker.tx(({ db, send }) => {
    db.prepare("INSERT INTO users (email) VALUES (?)").run("bob@example.com");
    send("emails", { body: "welcome bob" });
    throw new Error("something failed after the send");
  });
} catch (err) {
  console.log("rolled back:", (err as Error).message);
}
console.log((await broker.stats("emails")).active, "message(s) queued"); // 1
await broker.close();
