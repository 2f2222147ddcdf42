import { Duplex } from "node:stream";
import type { ToThread } from "./front-door-thread.js";

/** The peer of a relayed connection, as the front door's thread saw it. */
export interface RelayedPeer {
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  remoteFamily: string | undefined;
  localAddress: string | undefined;
  localPort: number | undefined;
}

/**
 * A client's connection, accepted by the front door's thread and relayed to the main thread's
 * HTTP server as a stream (node's http server takes any Duplex as a connection). It carries
 * what the server and the status routes read of a socket: the peer's address (the loopback
 * check of the write API), and setTimeout, which the thread applies to the real socket and
 * whose 'timeout' comes back here (the idle and keep-alive bounds).
 */
export class RelayedSocket extends Duplex {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly remoteFamily: string | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  /** The thread was asked to stop reading the client (our buffer is full) and not yet to go on. */
  private paused = false;
  private timeoutListener: (() => void) | undefined;

  constructor(
    private readonly id: number,
    private readonly post: (message: ToThread, transfer?: ArrayBuffer[]) => void,
    peer: RelayedPeer,
  ) {
    super({ allowHalfOpen: true });
    this.remoteAddress = peer.remoteAddress;
    this.remotePort = peer.remotePort;
    this.remoteFamily = peer.remoteFamily;
    this.localAddress = peer.localAddress;
    this.localPort = peer.localPort;
  }

  /** Bytes from the client. */
  received(chunk: Uint8Array): void {
    if (this.destroyed) return;
    if (!this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)) && !this.paused) {
      this.paused = true;
      this.post({ type: "pause", id: this.id });
    }
  }

  override _read(): void {
    if (!this.paused) return;
    this.paused = false;
    this.post({ type: "resume", id: this.id });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // A copy of its own, moved to the thread without another copy.
    const copy = new Uint8Array(chunk);
    this.post({ type: "data", id: this.id, chunk: copy }, [copy.buffer]);
    callback();
  }

  // No destroySoon: the http server then ends the stream after an answer with `connection:
  // close`, and the thread ends the client's socket once its data is written (a destroy here
  // could cut an answer still queued there); a client that keeps its side open meets the idle timeout.
  override _final(callback: (error?: Error | null) => void): void {
    this.post({ type: "end", id: this.id });
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.post({ type: "destroy", id: this.id });
    callback(error);
  }

  /** As net.Socket's: `ms` without activity on the client's socket emits 'timeout' here; 0 turns it off. */
  setTimeout(ms: number, callback?: () => void): this {
    this.post({ type: "timeout", id: this.id, ms });
    if (this.timeoutListener !== undefined) this.removeListener("timeout", this.timeoutListener);
    this.timeoutListener = ms > 0 ? callback : undefined;
    if (this.timeoutListener !== undefined) this.once("timeout", this.timeoutListener);
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }
}
