import "./all-cases.js";
import { remoteSubject } from "./remote-subject.js";
import { runConformance } from "./suite.js";

runConformance(remoteSubject, { store: "file" });
