import { describe, expect, it } from "vitest";
import { createAddressPolicy } from "./address-policy.js";

describe("address policy", () => {
  const none = createAddressPolicy([]);

  it.each([
    ["127.0.0.1", "a loopback address"],
    ["::1", "a loopback address"],
    ["::ffff:7f00:1", "a loopback address"],
    ["0.0.0.0", "an unspecified address"],
    ["::", "an unspecified address"],
    ["169.254.169.254", "a link-local (cloud metadata) address"],
    ["fe80::1", "a link-local address"],
    ["10.1.2.3", "a private address"],
    ["172.31.255.255", "a private address"],
    ["192.168.0.1", "a private address"],
    ["fd00:ec2::254", "a private (ULA) address"],
    ["100.100.100.200", "a shared (CGNAT) address"],
    ["239.255.255.250", "a multicast address"],
    ["ff02::1", "a multicast address"],
    ["192.0.0.192", "a reserved address"],
    ["255.255.255.255", "a reserved address"],
  ])("refuses %s as %s", (address, kind) => {
    expect(none.refusal(address)).toBe(kind);
  });

  it.each(["93.184.215.14", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:5db8:d70e"])(
    "allows the public address %s",
    (address) => {
      expect(none.refusal(address)).toBeUndefined();
    },
  );

  it("allows what the allow-list names, and only that", () => {
    const allow = createAddressPolicy(["10.0.0.0/8", "fd00::/8", "127.0.0.1"]);
    expect(allow.refusal("10.9.8.7")).toBeUndefined();
    expect(allow.refusal("fd12::1")).toBeUndefined();
    expect(allow.refusal("127.0.0.1")).toBeUndefined();
    expect(allow.refusal("127.0.0.2")).toBe("a loopback address");
    expect(allow.refusal("192.168.0.1")).toBe("a private address");
  });
});
