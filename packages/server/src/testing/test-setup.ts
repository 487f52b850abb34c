/**
 * Runs before every server test file (vitest setupFiles). Route tests create and sign in
 * hundreds of users; at production argon2id cost that was most of the suite's time on CI.
 * Hashing itself is tested at production cost in @fleetback/crypto, and e2e runs the real server.
 * Every test's database comes from one PGlite (and one PostgreSQL pool) per test file, stopped
 * after its last test.
 */
import { useTestPasswordHashParams } from "@fleetback/crypto";
import { closeSharedTestEngines } from "@fleetback/db/testing";
import { afterAll } from "vitest";

useTestPasswordHashParams();
afterAll(closeSharedTestEngines);
