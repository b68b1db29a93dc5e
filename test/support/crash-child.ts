// A process that sends, receives and settles as fast as it can, printing every acknowledged effect,
// until it is killed:  S <seq> <index>  (send committed),  R <seq>  (received), C <seq>  (complete
// committed), L <seq>  (received and left locked: in flight when the process dies).

import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";

const [path] = process.argv.slice(2) as [string];
const broker = await openBroker(path, { background: false, logger: silentLogger, synchronous: "normal" });
const out = (line: string) => process.stdout.write(`${line}\n`);
let i = 0;
for (;;) {
  const batch = Array.from({ length: 1 + (i % 5) }, (_, k) => ({
    body: `body-${i + k}`,
    messageId: `m-${i + k}`,
  }));
  const seqs = await broker.send("crash", batch);
  for (const [k, seq] of seqs.entries()) out(`S ${seq} ${i + k}`);
  i += batch.length;
  const got = await broker.receive("crash", { maxMessages: 3 });
  for (const m of got) out(`R ${m.seqNumber}`);
  for (const m of got) {
    if (m.seqNumber % 4 === 0) {
      out(`L ${m.seqNumber}`);
      continue;
    }
    await broker.complete("crash", m.seqNumber, m.lockToken!);
    out(`C ${m.seqNumber}`);
  }
}
