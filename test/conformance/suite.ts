import type { SubjectFactory } from "./subject.js";

/** Every conformance case file registers its `describe` blocks through one of these. */
export type CaseFile = (factory: SubjectFactory) => void;

const files: CaseFile[] = [];

/** Registers a case file (each cases/*.case.ts calls this at import). */
export function cases(file: CaseFile): void {
  files.push(file);
}

/** Runs every registered case file against one implementation. */
export function runConformance(factory: SubjectFactory): void {
  for (const file of files) file(factory);
}
