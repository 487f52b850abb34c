/**
 * @module time/timers
 * The timers of the time port shared with the server (@fleetback/protocol `time`): heartbeat
 * cadence, reconnect backoff and claim polling are driven by hand in tests through them.
 * Re-exported so the agent's modules keep one local import path for it.
 */
export { type CancelTimer, sleep, systemTimers, type TimerOptions, type Timers } from "@fleetback/protocol";
