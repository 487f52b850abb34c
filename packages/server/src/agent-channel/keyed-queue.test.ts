import { describe, expect, it } from "vitest";
import { createKeyedQueue } from "./keyed-queue.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("keyed queue", () => {
  it("runs one key's tasks in order, other keys alongside, and survives a failing task", async () => {
    const queue = createKeyedQueue();
    const order: string[] = [];
    const slow = async (name: string) => {
      await tick();
      await tick();
      order.push(name);
    };
    const a1 = queue.run("a", () => slow("a1"));
    const a2 = queue.run("a", async () => {
      throw new Error("boom");
    });
    const a3 = queue.run("a", async () => {
      order.push("a3");
      return 3;
    });
    const b1 = queue.run("b", async () => {
      order.push("b1");
    });
    await expect(a2).rejects.toThrow("boom");
    expect(await a3).toBe(3);
    await Promise.all([a1, b1]);
    await queue.idle();
    expect(order).toEqual(["b1", "a1", "a3"]);
  });
});
