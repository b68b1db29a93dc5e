import type { SubjectFactory, SubjectTraits } from "./subject.js";

/** Every conformance case file registers its `describe` blocks through one of these. */
export type CaseFile = (factory: SubjectFactory, traits: SubjectTraits) => void;

const files: CaseFile[] = [];

/** Registers a case file (each cases/*.case.ts calls this at import). */
export function cases(file: CaseFile): void {
  files.push(file);
}

/** Runs every registered case file against one implementation. */
export function runConformance(factory: SubjectFactory, traits: SubjectTraits): void {
  for (const file of files) file(factory, traits);
}
