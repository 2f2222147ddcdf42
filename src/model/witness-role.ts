/** Which of a `source: both` watch's two readers saw a record: the explorer's source or the node's. */
export type WitnessRole = "explorer" | "node";

export const WITNESS_ROLES: readonly WitnessRole[] = ["explorer", "node"];

/** The other reader of a `source: both` watch. */
export function otherRole(role: WitnessRole): WitnessRole {
  return role === "explorer" ? "node" : "explorer";
}
