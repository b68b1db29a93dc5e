import { currentJob, Queue } from "mqlite";

const queue = new Queue({ dbPath: "flows.db" })
  .task("size", (name: string) => name.length)
  .task("total", async () => {
    const sizes = await currentJob().childResults<number>(); // { [childId]: result }
    return Object.values(sizes).reduce((a, b) => a + b, 0);
  });
const flow = await queue.enqueueFlow({
  task: "total",
  children: [
    { task: "size", args: ["alpha"] },
    { task: "size", args: ["beta"], options: { queue: "bulk", priority: 5 } },
  ],
});
console.log(flow); // { id: "1", children: [ { id: "2", children: [] }, { id: "3", children: [] } ] }
const worker = queue.runWorker({ queues: ["default", "bulk"] });
console.log(await queue.result(flow.id)); // 9
await worker.stop();
await queue.close();
