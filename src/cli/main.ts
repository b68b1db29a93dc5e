#!/usr/bin/env node
// The `mqlite` executable.
import { runCli } from "./program.js";

await runCli(process.argv);
