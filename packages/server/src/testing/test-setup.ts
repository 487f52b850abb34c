/**
 * Runs before every server test file (vitest setupFiles). Route tests create and sign in
 * hundreds of users; at production argon2id cost that was most of the suite's time on CI.
 * Hashing itself is tested at production cost in @fleetback/crypto, and e2e runs the real server.
 */
import { useTestPasswordHashParams } from "@fleetback/crypto";

useTestPasswordHashParams();
