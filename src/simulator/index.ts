export { createSimulator } from "./simulator.js";
export type { Simulator, SimulatorOptions, SimulatorFaults, SimulatorLimits, SimulatorTruth, SimulatorAddresses, SimulatorStats, ChosenRecords, BlockRange } from "./simulator.js";
export type { Density } from "./generate.js";
