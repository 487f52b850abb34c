/**
 * @module hosts/credential-form
 * The page form that edits one credential slot: the repository and admin slots on the host page,
 * the mirror on its own section. The JSON routes take hosts/credential-body.ts instead, where
 * null removes a field; a form cannot send null, so here a blank field keeps what is stored.
 */
import type { Context } from "hono";
import { Type } from "typebox";
import { readForm } from "../http/validate.js";
import type { CredentialPatch } from "./credentials.js";

const CredentialForm = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    username: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    login_password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

/** The posted form as the edit putCredentials takes; passwords are kept as typed, untrimmed. */
export async function readCredentialForm(c: Context): Promise<CredentialPatch> {
  const form = await readForm(c, CredentialForm);
  return {
    url: form.url?.trim() || undefined,
    username: form.username?.trim() || undefined,
    password: form.password || undefined,
    login_password: form.login_password || undefined,
  };
}
