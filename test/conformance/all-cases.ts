// Imports every case file so that runConformance sees them all.
import "./cases/peek-lock.case.js";
