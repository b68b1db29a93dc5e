import type { Command } from "commander";
import { VERSION } from "../../version.js";
import { addOutputOption, type OutputFormat } from "../options.js";
import { printJson, printText } from "../output/write.js";

/** `mqlite version`: this program's version. */
export function registerVersion(program: Command): void {
  addOutputOption(program.command("version").description("print the version")).action(
    async (flags: { output: OutputFormat }) => {
      if (flags.output === "json" || flags.output === "wire") await printJson({ version: VERSION });
      else await printText(`mqlite ${VERSION}`);
    },
  );
}
