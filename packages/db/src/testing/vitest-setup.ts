/**
 * A vitest setup file for packages whose tests use databases: the shared engines (one PGlite and
 * one PostgreSQL pool per test process) stop after the file's last test, and their spare schemas
 * go with them instead of staying behind on the PostgreSQL server.
 */
import { afterAll } from "vitest";
import { closeSharedTestEngines } from "./test-engine.js";

afterAll(closeSharedTestEngines);
