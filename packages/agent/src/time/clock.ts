/**
 * @module time/clock
 * The clock of the time port shared with the server (@fleetback/protocol `time`), re-exported so
 * the agent's modules keep one local import path for it.
 */
export { type Clock, systemClock } from "@fleetback/protocol";
