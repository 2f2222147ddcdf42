import type { ChosenRecords, Simulator, SimulatorAddresses } from "../simulator/index.js";

const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const TOKEN_UNIT = 10n ** 18n;

const topicOf = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
const word = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}`;

/** Who the demo watches: the simulator's busiest wallet, collection and token. */
export interface DemoTargets {
  treasury: string;
  collection: string;
  token: string;
}

export function demoTargets(addresses: SimulatorAddresses): DemoTargets {
  return { treasury: addresses.busyWallet, collection: addresses.busyCollection, token: addresses.busyToken };
}

/**
 * One block with a record for each demo rule: a large outflow from the treasury, a failed
 * call of it, a transfer in the collection and a whale transfer of the token. The generated
 * chain produces all four by chance too; this makes sure a newcomer sees each within seconds.
 * `round` varies the amounts so that successive showcases are told apart.
 */
export function showcaseRecords(addresses: SimulatorAddresses, round: number): ChosenRecords {
  const { treasury, collection, token } = demoTargets(addresses);
  const other = addresses.wallets.find((w) => w.toLowerCase() !== treasury.toLowerCase()) ?? treasury;
  const router = addresses.contracts[0] ?? other;
  const whale = (2_500_000n + BigInt(round) * 125_000n) * TOKEN_UNIT;
  return {
    internalTransactions: [
      { type: "CALL", from: treasury, to: other, amount: `${25_000 + round * 1_250}.5`, transaction_status: { status: "Success" } },
      {
        type: "CALL",
        from: treasury,
        to: router,
        amount: "0",
        error: "execution reverted",
        transaction_status: { status: "Fail", fail_message: "execution reverted: slippage too high" },
      },
    ],
    nftTransfers: [{ contract: { contract_address: collection, contract_type: "KIP17" }, from: other, to: treasury, token_id: String(7_000 + round), token_count: "1" }],
    eventLogs: [
      {
        contract_address: token,
        type: "Transfer",
        topics: [TRANSFER_TOPIC, topicOf(treasury), topicOf(other)],
        data: word(whale),
        items: [
          { name: "from", value: treasury },
          { name: "to", value: other },
          { name: "value", value: whale.toString() },
        ],
      },
    ],
  };
}

/**
 * Sets the demo chain going: a showcase block now, then a block every `blockTimeMs` and a
 * showcase block every `intervalMs`, until stopped. The chain is created frozen and moves
 * only from here, so the first showcase block is always the block after the initial ones
 * (the README shows its alert, ids and all), however long the daemon took to start.
 */
export function startShowcase(sim: Simulator, options: { intervalMs: number; blockTimeMs: number }): { stop(): void } {
  let round = 0;
  const add = () => sim.addBlock(showcaseRecords(sim.addresses, round++));
  add();
  const showcase = setInterval(add, options.intervalMs);
  const blocks = setInterval(() => sim.mine(), options.blockTimeMs);
  return {
    stop: () => {
      clearInterval(showcase);
      clearInterval(blocks);
    },
  };
}
