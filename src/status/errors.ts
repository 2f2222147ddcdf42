import { KaiawatchError } from "../common/errors.js";

/** The status server failed to start (KW_STATUS_LISTEN: the address or port cannot be used). */
export class StatusError extends KaiawatchError {
  override name = "StatusError";
}
