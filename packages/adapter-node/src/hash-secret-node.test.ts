import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hashSecret } from "@benchdata/core";
import { hashSecretNode } from "./hash-secret-node.ts";

describe("hashSecretNode", () => {
  it("gives core's hashSecret digest for every string (keys, tokens, and any Unicode)", () => {
    expect(hashSecretNode("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 200 }), (s) => hashSecretNode(s) === hashSecret(s)), { numRuns: 2000 });
  });
});
