import "./all-cases.js";
import { embeddedSubject } from "./embedded-subject.js";
import { runConformance } from "./suite.js";

runConformance(embeddedSubject, { store: "file" });
