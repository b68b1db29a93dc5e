import { after, afterEach, before, describe } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { Queue } from "../../src/jobs/index.js";
import type { QueueOptions } from "../../src/jobs/types.js";
import { JOB_BROKER_SUBJECTS, type JobBroker } from "./broker-subjects.js";

/** What a job-face test gets on one subject: queues on the shared broker, each closed after its test. */
export interface SubjectQueues {
  /** The subject's name (embedded, remote, postgres). */
  readonly subject: string;
  /**
   * A queue on the subject's broker in a namespace of its own (this test's, unless `namespace` is
   * given: a second queue of the same test passes `first.namespace`), closed after the test.
   */
  queue(options?: Omit<QueueOptions, "broker" | "dbPath" | "dsn">, broker?: Broker): Queue;
  /** The namespace of the running test (what `queue()` uses by default). */
  readonly namespace: string;
  /** Another broker on the same store, as another process would open it. */
  second(): Promise<Broker>;
}

/**
 * Registers `body`'s tests once per job broker subject (embedded SQLite, remote, PostgreSQL), with
 * one broker per subject for the whole file: each test keeps apart in its own namespace.
 */
export function onEverySubject(title: string, body: (s: SubjectQueues) => void): void {
  for (const subject of JOB_BROKER_SUBJECTS) {
    describe(`${title} (${subject.name})`, () => {
      let b: JobBroker;
      let n = 0;
      const opened: Queue[] = [];
      before(async () => {
        b = await subject.open();
      });
      afterEach(async () => {
        n++;
        for (const q of opened.splice(0)) await q.close();
      });
      after(() => b.close());
      body({
        subject: subject.name,
        get namespace() {
          return `t${n}`;
        },
        queue(options = {}, broker) {
          const q = new Queue({ namespace: `t${n}`, ...options, broker: broker ?? b.broker });
          opened.push(q);
          return q;
        },
        second: () => b.second(),
      });
    });
  }
}
