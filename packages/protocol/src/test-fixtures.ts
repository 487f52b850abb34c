/**
 * @module test-fixtures
 * Loads the golden frames of ../fixtures for the tests (not part of the build).
 */
import { readdirSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { decode, encode } from "./codec.js";
import type { Direction } from "./envelope.js";

export const DIRECTIONS: readonly Direction[] = ["agent-to-server", "server-to-agent"];

export interface Fixture {
  direction: Direction;
  /** File name, e.g. "command.run.backup.json". */
  file: string;
  /** The file's text, as a peer would send it. */
  text: string;
  frame: { id: string; type: string; payload: Record<string, unknown> };
}

const root = new URL("../fixtures/", import.meta.url);

export function loadFixtures(): Fixture[] {
  return DIRECTIONS.flatMap((direction) =>
    readdirSync(new URL(`${direction}/`, root))
      .filter((file) => file.endsWith(".json"))
      .sort()
      .map((file) => {
        const text = readFileSync(new URL(`${direction}/${file}`, root), "utf8");
        return { direction, file, text, frame: JSON.parse(text) };
      }),
  );
}

/** A deep copy of one golden frame, to be edited by one test. */
export function goldenFrame(file: string): Fixture["frame"] {
  const fixture = loadFixtures().find((candidate) => candidate.file === file);
  if (fixture === undefined) {
    throw new Error(`no fixture ${file}`);
  }
  return structuredClone(fixture.frame);
}

/** The golden check: the frame decodes, and encoding the result gives the same JSON back. */
export function roundTrips(direction: Direction, frame: unknown): boolean {
  const decoded = decode(JSON.stringify(frame), direction);
  if (!decoded.ok) {
    return false;
  }
  const { id, type, payload } = decoded.message;
  return isDeepStrictEqual(JSON.parse(encode(type, payload, id)), frame);
}
