import "./all-cases.js";
import { requirePostgres } from "../postgres/pg.js";
import { postgresSubject } from "./postgres-subject.js";
import { runConformance } from "./suite.js";

// No server, no pass: this suite fails loudly rather than skip.
await requirePostgres();
runConformance(postgresSubject, { store: "server" });
