import { describe, expect, it } from "vitest";
import { trustedProxyList } from "../config.js";
import { resolveClientAddress, sourceNetwork } from "./client-address.js";

const proxies = trustedProxyList(["10.0.0.0/8", "fd00::/8", "192.0.2.10"]);

describe("resolveClientAddress", () => {
  it.each([
    ["an untrusted peer, whatever it forwards", "203.0.113.5", "198.51.100.7", "203.0.113.5"],
    ["a trusted peer without the header", "10.0.0.2", undefined, "10.0.0.2"],
    ["the first untrusted hop from the right", "10.0.0.2", "1.1.1.1, 198.51.100.7, 10.0.0.9", "198.51.100.7"],
    ["the leftmost hop when every hop is trusted", "10.0.0.2", "10.1.1.1, 10.0.0.9", "10.1.1.1"],
    ["the trusted hop before a malformed entry", "10.0.0.2", "198.51.100.7, evil, 10.0.0.9", "10.0.0.9"],
    ["IPv4 on a dual-stack socket", "::ffff:192.0.2.10", "198.51.100.7", "198.51.100.7"],
    ["an IPv6 proxy", "fd00::1", "2001:db8::7", "2001:db8::7"],
  ])("picks %s", (_name, peer, header, expected) => {
    expect(resolveClientAddress(peer, header, proxies)).toBe(expected);
  });

  it("joins repeated headers in order", () => {
    expect(resolveClientAddress("10.0.0.2", ["198.51.100.7", "10.0.0.9"], proxies)).toBe("198.51.100.7");
  });
});

describe("sourceNetwork", () => {
  it.each([
    ["203.0.113.77", "203.0.113.0/24"],
    ["::ffff:203.0.113.77", "203.0.113.0/24"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    [undefined, "unknown"],
    ["not an address", "unknown"],
  ])("puts %s in %s", (address, expected) => {
    expect(sourceNetwork(address)).toBe(expected);
  });
});
