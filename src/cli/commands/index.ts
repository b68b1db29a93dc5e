import type { Command } from "commander";
import { registerServe } from "./serve.js";

/** Adds one command (with its options and action) to the program. One file per command. */
export type RegisterCommand = (program: Command) => void;

/** Every command, in the order `mqlite help` lists them. Add new commands here. */
export const commands: RegisterCommand[] = [registerServe];
