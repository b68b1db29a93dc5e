// Compares two bench result files and exits 1 when a figure got worse by more than the threshold.
// Usage: npm run bench:compare -- <before.json> <after.json> [--threshold 10]
//   e.g. cp bench/results/latest.json /tmp/before.json; (change); npm run bench;
//        npm run bench:compare -- /tmp/before.json bench/results/latest.json
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { type BenchFile, compareBench, formatComparison } from "../bench/_compare.js";

const program = new Command("bench:compare")
  .argument("<before>", "bench/results/latest.json of the earlier run")
  .argument("<after>", "bench/results/latest.json of the later run")
  .option("--threshold <percent>", "flag figures worse by more than this", "10")
  .action((beforePath: string, afterPath: string, opts: { threshold: string }) => {
    const threshold = Number(opts.threshold) / 100;
    if (!(threshold > 0 && threshold < 1)) program.error("--threshold is a percentage between 0 and 100");
    const read = (p: string) => JSON.parse(readFileSync(p, "utf8")) as BenchFile;
    const result = compareBench(read(beforePath), read(afterPath), threshold);
    console.log(formatComparison(result, threshold));
    process.exitCode = result.changes.some((c) => c.regressed) ? 1 : 0;
  });
program.parse();
