import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { Writer } from "../../src/store/sqlite/writer.js";
import { countTurns } from "../support/turns.js";

/**
 * A writer over a scratch table that counts its transactions. `idleMs`: how long without writes
 * makes it idle (see `Writer.idleMs`). Infinite by default here: the writer then gathers every
 * write as a busy one does, whatever pause (a JIT compile, a collection) the test process takes.
 */
function setup(idleMs = Number.POSITIVE_INFINITY) {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (v INTEGER NOT NULL UNIQUE)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  let commits = 0;
  const writer = new Writer(db, () => {
    commits++;
  });
  writer.idleMs = idleMs;
  const write = (v: number) => writer.run(() => Number(insert.run(v).lastInsertRowid));
  return { db, writer, write, commits: () => commits };
}

/** Sixteen writes, each from its own callback of one check phase (as HTTP requests parsed in one poll phase). */
function writesFromCallbacks(s: ReturnType<typeof setup>, order: string[] = []): Promise<Promise<number>[]> {
  return new Promise<Promise<number>[]>((resolve) => {
    const out: Promise<number>[] = [];
    for (let i = 0; i < 16; i++)
      setImmediate(() => {
        order.push(`callback ${i}`);
        out.push(
          s.write(i).then((v) => {
            order.push(`committed ${i}`);
            return v;
          }),
        );
        if (out.length === 16) resolve(out);
      });
  });
}

/** Turns of the event loop while one caller makes `n` writes, each awaiting the previous one. */
async function turnsDuringSequentialWrites(n: number): Promise<number> {
  const s = setup();
  const turns = countTurns();
  for (let i = 0; i < n; i++) await s.write(i);
  return turns.stop();
}

describe("group commit", () => {
  it("writes made together share one transaction, each with its own result and error", async () => {
    const s = setup();
    const results = await Promise.allSettled([s.write(1), s.write(2), s.write(1), s.write(3)]);
    assert.equal(s.commits(), 1);
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "fulfilled", "rejected", "fulfilled"],
    );
    assert.deepEqual(
      (s.db.prepare("SELECT v FROM t ORDER BY v").all() as { v: number }[]).map((r) => r.v),
      [1, 2, 3],
    );
  });

  it("writes from separate event-loop callbacks of one phase share one commit", async () => {
    const s = setup();
    // Like HTTP requests parsed in one poll phase: each callback is its own task, microtasks drain
    // between them.
    await Promise.all(await writesFromCallbacks(s));
    assert.equal(s.commits(), 1);
  });

  it("on an idle writer, a write commits within its own task; the rest of the phase share one commit", async () => {
    // Idle after 50 ms here (half a millisecond by default), so that no pause of the test process
    // between two callbacks makes it idle again.
    const s = setup(50);
    await s.write(-1);
    await new Promise((r) => setTimeout(r, 100));
    const before = s.commits();
    const order: string[] = [];
    await Promise.all(await writesFromCallbacks(s, order));
    assert.equal(s.commits() - before, 2);
    // The first committed before the next callback ran; the others after the last one.
    assert.deepEqual(order.slice(0, 3), ["callback 0", "committed 0", "callback 1"]);
    assert.equal(order.indexOf("committed 1"), order.indexOf("callback 15") + 1);
  });

  it("after a quiet sequential stretch, writes from one phase's callbacks still share one commit", async () => {
    const s = setup();
    for (let i = 0; i < 20; i++) await s.write(100 + i);
    const before = s.commits();
    const done = await new Promise<Promise<number>[]>((resolve) => {
      const out: Promise<number>[] = [];
      for (let i = 0; i < 16; i++)
        setImmediate(() => {
          out.push(s.write(i));
          if (out.length === 16) resolve(out);
        });
    });
    await Promise.all(done);
    assert.equal(s.commits() - before, 1);
  });

  it("writes arriving over the next turns of the event loop join the group while it grows", async () => {
    const s = setup();
    // Like requests of many connections trickling in while the server is busy: two per turn.
    const out: Promise<number>[] = [];
    await new Promise<void>((resolve) => {
      let turn = 0;
      const next = () => {
        out.push(s.write(turn * 2), s.write(turn * 2 + 1));
        if (++turn < 3) setImmediate(next);
        else resolve();
      };
      setImmediate(next);
    });
    assert.deepEqual(await Promise.all(out), [1, 2, 3, 4, 5, 6]);
    assert.equal(s.commits(), 1);
  });

  it("a lone write on an idle writer commits before the loop turns", async () => {
    const s = setup(50);
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      setTimeout(() => {
        // Queued before the write: were the write to wait for a turn, this would come first.
        setImmediate(() => {
          order.push("turn");
          resolve();
        });
        void s.write(1).then(() => order.push("committed"));
      }, 1);
    });
    assert.deepEqual(order, ["committed", "turn"]);
  });

  it("on a busy writer, a lone write from an event-loop callback commits in the next turn, not a second one", async () => {
    const s = setup();
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      setTimeout(() => {
        void s.write(1).then(() => order.push("committed"));
        // Queued after the writer's own turn: it runs in the same check phase, just after it.
        setImmediate(() => {
          order.push("next turn");
          setImmediate(resolve);
        });
      }, 1);
    });
    assert.deepEqual(order, ["committed", "next turn"]);
  });

  it("behind a group of several, a write waits a second turn for the writes trickling in after it", async () => {
    const s = setup();
    await Promise.all([s.write(1), s.write(2), s.write(3)]);
    const before = s.commits();
    // Like a busy server's connections, answered together, sending their next requests over two turns.
    const out = await new Promise<Promise<number>[]>((resolve) => {
      setTimeout(() => {
        const first = s.write(4);
        setImmediate(() => resolve([first, s.write(5)]));
      }, 1);
    });
    await Promise.all(out);
    assert.equal(s.commits() - before, 1);
  });

  it("a group waits a bounded number of turns: a steady trickle still commits", async () => {
    const s = setup();
    const out: Promise<number>[] = [];
    let firstSettledAtTurn: number | undefined;
    await new Promise<void>((resolve) => {
      let turn = 0;
      const next = () => {
        const t = turn;
        out.push(
          s.write(t).then((v) => {
            firstSettledAtTurn ??= t;
            return v;
          }),
        );
        if (++turn < 40) setImmediate(next);
        else resolve();
      };
      setImmediate(next);
    });
    await Promise.all(out);
    // One write per turn, forever growing: the first group commits within a few turns anyway.
    assert.ok(
      firstSettledAtTurn !== undefined && firstSettledAtTurn <= 8,
      `settled at turn ${firstSettledAtTurn}`,
    );
    assert.ok(s.commits() >= 40 / 8, `${s.commits()} commits for 40 turns`);
  });

  it("concurrent callers writing in a loop keep sharing commits", async () => {
    const s = setup();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = 0; i < 10; i++) await s.write(next++);
      }),
    );
    assert.equal(next, 160);
    assert.ok(s.commits() <= 20, `${s.commits()} commits for 16 callers × 10 writes`);
  });

  it("a sequential caller's writes still let the event loop turn", async () => {
    const turns = await turnsDuringSequentialWrites(200);
    // At most a bounded run of commits goes by without the loop turning.
    assert.ok(turns >= 200 / 10, `${turns} turns during 200 writes`);
  });

  it("a sequential caller's yield to the event loop costs it one turn, not a second one to gather", async () => {
    const turns = await turnsDuringSequentialWrites(200);
    // One yield per nine commits (eight chained, then one turn): about 22 turns; waiting a second
    // turn for more writes each time would make it about 44.
    assert.ok(turns <= 200 / 9 + 4, `${turns} turns during 200 writes`);
  });
});

describe("before-commit hooks", () => {
  it("run in the writes' transaction, after every write, and what they register runs after the commit", async () => {
    const s = setup();
    const order: string[] = [];
    await Promise.all([
      s.writer.run((ctx) => {
        ctx.beforeCommit((c) => {
          order.push(`hook sees ${(s.db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n}`);
          s.db.prepare("INSERT INTO t (v) VALUES (100)").run();
          c.afterCommit(() => order.push("after"));
          c.afterRollback(() => order.push("rolled back"));
        });
        s.db.prepare("INSERT INTO t (v) VALUES (1)").run();
      }),
      s.write(2),
    ]);
    assert.equal(s.commits(), 1);
    assert.deepEqual(order, ["hook sees 2", "after"]);
    assert.equal((s.db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, 3);
  });

  it("a hook that throws is undone with what it registered; the writes still commit", async () => {
    const s = setup();
    const order: string[] = [];
    const v = await s.writer.run((ctx) => {
      ctx.beforeCommit((c) => {
        s.db.prepare("INSERT INTO t (v) VALUES (100)").run();
        c.afterCommit(() => order.push("hook's after"));
        c.afterRollback(() => order.push("hook undone"));
        throw new Error("hook failed");
      });
      ctx.afterCommit(() => order.push("write's after"));
      return Number(s.db.prepare("INSERT INTO t (v) VALUES (1)").run().lastInsertRowid);
    });
    assert.equal(v, 1);
    assert.deepEqual(order, ["hook undone", "write's after"]);
    assert.deepEqual(
      (s.db.prepare("SELECT v FROM t").all() as { v: number }[]).map((r) => r.v),
      [1],
    );
  });

  it("a write that fails in a group keeps its hooks out; a failed commit runs the rollback hooks", async () => {
    const s = setup();
    const order: string[] = [];
    const results = await Promise.allSettled([
      s.write(1),
      s.writer.run((ctx) => {
        ctx.beforeCommit(() => order.push("failed write's hook"));
        ctx.afterRollback(() => order.push("failed write undone"));
        s.db.prepare("INSERT INTO t (v) VALUES (1)").run(); // UNIQUE: fails
      }),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "rejected"],
    );
    assert.deepEqual(order, ["failed write undone"]);

    // A single write whose hook leaves the transaction unable to commit (a deferred constraint).
    s.db.exec(
      "CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)",
    );
    s.db.pragma("foreign_keys = ON");
    const seen: string[] = [];
    await assert.rejects(
      s.writer.run((ctx) => {
        ctx.beforeCommit((c) => {
          c.afterCommit(() => seen.push("after"));
          c.afterRollback(() => seen.push("rolled back"));
        });
        s.db.prepare("INSERT INTO c (p) VALUES (42)").run();
      }),
    );
    assert.deepEqual(seen, ["rolled back"]);
  });

  describe("groups of replayable writes run without a savepoint per write", () => {
    /** A writer whose writes are replayable; counts rollbacks, runs of each write, and savepoints. */
    function replayable() {
      const db = new Database(":memory:");
      db.exec("CREATE TABLE t (v INTEGER NOT NULL UNIQUE)");
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
      let rollbacks = 0;
      let savepoints = 0;
      // Count the writer's savepoints: its statements are prepared when it is made.
      const prepare = db.prepare.bind(db);
      db.prepare = ((source: string) => {
        const stmt = prepare(source);
        if (!source.startsWith("SAVEPOINT")) return stmt;
        const run = stmt.run.bind(stmt);
        return Object.assign(stmt, {
          run: () => {
            savepoints++;
            return run();
          },
        });
      }) as typeof db.prepare;
      const writer = new Writer(
        db,
        () => {},
        () => {
          rollbacks++;
        },
      );
      const runs = new Map<number, number>();
      const events: string[] = [];
      const write = (v: number, replay = true) =>
        writer.run(
          (ctx) => {
            runs.set(v, (runs.get(v) ?? 0) + 1);
            ctx.afterCommit(() => events.push(`committed ${v}`));
            ctx.afterRollback(() => events.push(`undone ${v}`));
            return Number(insert.run(v).lastInsertRowid);
          },
          undefined,
          replay,
        );
      const stored = () =>
        (db.prepare("SELECT v FROM t ORDER BY v").all() as { v: number }[]).map((r) => r.v);
      return {
        db,
        writer,
        write,
        runs,
        events,
        stored,
        rollbacks: () => rollbacks,
        savepoints: () => savepoints,
      };
    }

    it("a group that succeeds runs each write once and takes no savepoint", async () => {
      const s = replayable();
      const ids = await Promise.all([s.write(1), s.write(2), s.write(3)]);
      assert.deepEqual(ids, [1, 2, 3]);
      assert.deepEqual([...s.runs.values()], [1, 1, 1]);
      assert.deepEqual(s.events, ["committed 1", "committed 2", "committed 3"]);
      assert.equal(s.rollbacks(), 0);
      assert.equal(s.savepoints(), 0);
    });

    it("a write failing in the group is undone alone: the group runs again with savepoints", async () => {
      const s = replayable();
      await s.write(5);
      s.events.length = 0;
      const results = await Promise.allSettled([s.write(1), s.write(5), s.write(3)]);
      assert.deepEqual(
        results.map((r) => r.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      assert.deepEqual(s.stored(), [1, 3, 5]);
      // The first pass ran writes 1 and 5 (then rolled back); the second ran all three.
      assert.deepEqual(Object.fromEntries(s.runs), { 5: 3, 1: 2, 3: 1 });
      // Undone: the first pass's writes, then the failing write alone; committed once each.
      assert.deepEqual(s.events, ["undone 1", "undone 5", "undone 5", "committed 1", "committed 3"]);
      assert.ok(s.rollbacks() >= 2, "each rollback tells the owner its caches are stale");
    });

    it("after a failure the next groups run with savepoints, so a failing write costs its group one pass", async () => {
      const s = replayable();
      await s.write(9);
      await Promise.allSettled([s.write(1), s.write(9)]);
      s.runs.clear();
      await Promise.allSettled([s.write(2), s.write(9), s.write(4)]);
      assert.deepEqual(Object.fromEntries(s.runs), { 2: 1, 9: 1, 4: 1 });
    });

    it("a write that is not replayable makes its group run with savepoints: it runs once", async () => {
      const s = replayable();
      await s.write(7);
      s.runs.clear();
      const results = await Promise.allSettled([s.write(1, false), s.write(7), s.write(3)]);
      assert.deepEqual(
        results.map((r) => r.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      assert.deepEqual(Object.fromEntries(s.runs), { 1: 1, 7: 1, 3: 1 });
      assert.deepEqual(s.stored(), [1, 3, 7]);
      assert.equal(s.savepoints(), 3);
    });
  });
});

describe("long writes (runSliced)", () => {
  /** Turns the event loop until a long write runs (it starts within a few turns, however loaded the machine). */
  async function untilBusy(s: ReturnType<typeof setup>): Promise<void> {
    for (let turn = 0; turn < 1000 && !s.writer.busy; turn++) await new Promise((r) => setImmediate(r));
  }

  /** A long write inserting `values`, each a statement, after which the loop may turn. */
  function* inserting(s: ReturnType<typeof setup>, values: number[], failAt = -1) {
    const insert = s.db.prepare("INSERT INTO t (v) VALUES (?)");
    for (const v of values) {
      if (v === failAt) throw new Error(`refused ${v}`);
      insert.run(v);
      // Every statement takes a little while, so that the slices end and the loop turns.
      const until = performance.now() + 0.2;
      while (performance.now() < until);
      yield;
    }
    return values.length;
  }

  const count = (s: ReturnType<typeof setup>) =>
    (s.db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n;

  it("lets the event loop turn between its slices, in one transaction", async () => {
    const s = setup();
    const values = Array.from({ length: 400 }, (_, i) => i);
    const turning = countTurns();
    const done = s.writer.runSliced(() => inserting(s, values));
    // 400 statements of 0.2 ms each: several slices of 8 ms, with turns of the loop between them.
    await untilBusy(s);
    assert.equal(s.writer.busy, true);
    assert.equal(s.db.inTransaction, true);
    assert.equal(await done, 400);
    const turns = turning.stop();
    assert.ok(turns >= 5, `the loop turned ${turns} times during an 80 ms write`);
    assert.equal(s.commits(), 1);
    assert.equal(s.writer.busy, false);
    assert.equal(count(s), 400);
  });

  it("runs alone: writes queued behind it wait for its commit, writes before it commit first", async () => {
    const s = setup();
    const order: string[] = [];
    const before = s.write(-1).then(() => order.push("before"));
    const long = s.writer
      .runSliced(() =>
        inserting(
          s,
          Array.from({ length: 200 }, (_, i) => i),
        ),
      )
      .then(() => order.push("long"));
    const afterIt = untilBusy(s).then(() => {
      assert.equal(s.writer.busy, true);
      return s.write(-2).then(() => {
        order.push("after");
      });
    });
    await Promise.all([before, long, afterIt]);
    assert.deepEqual(order, ["before", "long", "after"]);
    assert.equal(count(s), 202);
  });

  it("one that fails is rolled back whole and the writes behind it still run", async () => {
    const s = setup();
    const long = s.writer.runSliced(() =>
      inserting(
        s,
        Array.from({ length: 200 }, (_, i) => i),
        150,
      ),
    );
    const behind = new Promise<number>((resolve) => setTimeout(() => resolve(s.write(1000)), 5));
    await assert.rejects(long, /refused 150/);
    assert.equal(typeof (await behind), "number");
    assert.equal(s.db.inTransaction, false);
    assert.deepEqual(
      (s.db.prepare("SELECT v FROM t").all() as { v: number }[]).map((r) => r.v),
      [1000],
    );
  });

  it("settled() resolves once it has committed; at once when none runs", async () => {
    const s = setup();
    await s.writer.settled();
    const long = s.writer.runSliced(() =>
      inserting(
        s,
        Array.from({ length: 100 }, (_, i) => i),
      ),
    );
    // Running for 20 ms in slices of 8, it is seen between two of them.
    await untilBusy(s);
    assert.equal(s.writer.busy, true);
    await s.writer.settled();
    assert.equal(s.writer.busy, false);
    assert.equal(count(s), 100);
    assert.equal(await long, 100);
  });

  it("one too short to let the loop turn ends like any write", async () => {
    const s = setup();
    assert.equal(await s.writer.runSliced(() => inserting(s, [1, 2])), 2);
    assert.equal(s.writer.busy, false);
    assert.equal(typeof (await s.write(3)), "number");
    assert.equal(count(s), 3);
  });
});

describe("sliced reads (readSliced)", () => {
  /** A read of `n` statements of 0.2 ms each, recording what each saw of the table. */
  function* reading(s: ReturnType<typeof setup>, n: number, seen: number[]) {
    const count = s.db.prepare("SELECT count(*) AS n FROM t");
    for (let i = 0; i < n; i++) {
      seen.push((count.get() as { n: number }).n);
      const until = performance.now() + 0.2;
      while (performance.now() < until);
      yield;
    }
    return n;
  }

  it("lets the event loop turn between its slices, writes committing between them", async () => {
    const s = setup();
    const seen: number[] = [];
    const turning = countTurns();
    const done = s.writer.readSliced(reading(s, 300, seen), () => {});
    // A write made while the read runs (its first slice runs in the next turn) commits between two
    // of its slices.
    await new Promise((r) => setImmediate(r));
    const write = s.write(1);
    assert.equal(await done, 300);
    const turns = turning.stop();
    await write;
    assert.ok(turns >= 4, `the loop turned ${turns} times during a 60 ms read`);
    assert.equal(seen[0], 0);
    assert.equal(seen.at(-1), 1, "the statements after the write's commit see it");
    assert.equal(s.db.inTransaction, false);
  });

  it("one too short to let the loop turn runs in one go", async () => {
    const s = setup();
    const seen: number[] = [];
    let slices = 0;
    assert.equal(await s.writer.readSliced(reading(s, 3, seen), () => slices++), 3);
    assert.equal(slices, 1);
    assert.deepEqual(seen, [0, 0, 0]);
  });

  it("runs no statement while a long write holds the transaction open", async () => {
    const s = setup();
    const insert = s.db.prepare("INSERT INTO t (v) VALUES (?)");
    const long = s.writer.runSliced(function* () {
      for (let v = 0; v < 100; v++) {
        insert.run(v);
        const until = performance.now() + 0.2;
        while (performance.now() < until);
        yield;
      }
      return 100;
    });
    for (let turn = 0; turn < 1000 && !s.writer.busy; turn++) await new Promise((r) => setImmediate(r));
    assert.equal(s.writer.busy, true);
    const seen: number[] = [];
    assert.equal(await s.writer.readSliced(reading(s, 2, seen), () => {}), 2);
    assert.equal(await long, 100);
    assert.deepEqual(seen, [100, 100], "it read after the commit, never the uncommitted rows");
  });

  it("stops with ClosedError once the writer has closed between two slices", async () => {
    const s = setup();
    const seen: number[] = [];
    const done = s.writer.readSliced(reading(s, 300, seen), () => {});
    await new Promise((r) => setImmediate(r));
    await s.writer.close();
    await assert.rejects(done, { name: "ClosedError" });
    assert.ok(seen.length > 0 && seen.length < 300, `${seen.length} statements ran before the close`);
  });

  it("a statement that throws rejects the read with its error", async () => {
    const s = setup();
    const steps = (function* () {
      s.db.prepare("SELECT * FROM missing").get();
      yield;
      return 0;
    })();
    await assert.rejects(
      s.writer.readSliced(steps, () => {}),
      (err: Error) => {
        assert.match(err.message, /no such table: missing/);
        return true;
      },
    );
  });
});
