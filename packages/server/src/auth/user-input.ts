/**
 * @module auth/user-input
 * A new user as an admin describes one, checked alike from the users page and the JSON API.
 */
import { USER_ROLES } from "@fleetback/db";
import { Type } from "typebox";
import { USERNAME_PATTERN } from "./users.js";

export const RoleInput = Type.Union(USER_ROLES.map((role) => Type.Literal(role)));

export const NewUserInput = Type.Object(
  {
    username: Type.String({ pattern: USERNAME_PATTERN }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    role: RoleInput,
  },
  { additionalProperties: false },
);
