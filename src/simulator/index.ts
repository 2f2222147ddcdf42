export { createSimulator } from "./simulator.js";
export { REPLICA_HEADER } from "./simulator.js";
export type { Poll } from "./poll-log.js";
export type { Simulator, SimulatorOptions, SimulatorFaults, SimulatorLimits, SimulatorTruth, SimulatorAddresses, SimulatorStats, ChosenRecords, BlockRange } from "./simulator.js";
export type { Density } from "./generate.js";
