import { describe, expect, it } from "vitest";
import { SignatureError, canonicalSignature, eventTopic, functionSelector, isSelector, isTopicHash, looksLikeSignature } from "../../src/chain/signatures.js";

describe("eventTopic", () => {
  it.each([
    ["Transfer(address,address,uint256)", "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"],
    ["Approval(address,address,uint256)", "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"],
    ["TransferSingle(address,address,address,uint256,uint256)", "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62"],
    ["ApprovalForAll(address,address,bool)", "0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31"],
  ])("hashes %s to its known topic", (signature, topic) => {
    expect(eventTopic(signature)).toBe(topic);
  });

  it("accepts what people paste from Solidity, and hashes the canonical form", () => {
    const topic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
    expect(eventTopic(" Transfer( address , address,uint256 ) ")).toBe(topic);
    expect(eventTopic("event Transfer(address indexed from, address indexed to, uint256 value)")).toBe(topic);
    expect(eventTopic("Transfer(address,address,uint)")).toBe(topic); // uint is uint256
    expect(canonicalSignature("f((uint,bytes32)[] memory xs, int8[3][] calldata y, byte b)")).toBe("f((uint256,bytes32)[],int8[3][],bytes1)");
    expect(canonicalSignature("Paused()")).toBe("Paused()");
  });

  it.each([
    "Transfer(address,address,uint257)",
    "Transfer(address,address",
    "(address)",
    "Transfer(address)x",
    "Transfer(addres)",
    "Transfer(address from to)",
    "Transfer(uint256[0])",
    "Transfer(bytes33)",
    "",
  ])("refuses %j instead of hashing a topic that never matches", (text) => {
    expect(() => eventTopic(text)).toThrow(SignatureError);
  });
});

describe("functionSelector and shapes", () => {
  it("gives the 4-byte selector", () => {
    expect(functionSelector("transfer(address,uint256)")).toBe("0xa9059cbb");
    expect(functionSelector("balanceOf(address)")).toBe("0x70a08231");
    expect(functionSelector("function approve(address spender, uint amount)")).toBe("0x095ea7b3");
  });

  it("tells hashes, selectors and signatures apart", () => {
    expect(isTopicHash("0xDDF252AD1BE2C89B69C2B068FC378DAA952BA7F163C4A11628F55A4DF523B3EF")).toBe(true);
    expect(isTopicHash("0xddf252ad")).toBe(false);
    expect(isSelector("0xa9059cbb")).toBe(true);
    expect(isSelector("0xa9059cb")).toBe(false);
    expect(looksLikeSignature("Transfer(address)")).toBe(true);
    expect(looksLikeSignature("0xa9059cbb")).toBe(false);
  });
});
