/**
 * @module hosts/credential-body
 * The request body that edits one credential slot (repo, admin, mirror), shared by the host and
 * mirror routes so both validate and document it alike.
 */
import { Type } from "typebox";

/**
 * One credential slot's edit (hosts/credentials.ts CredentialPatch), the same for all three slots:
 * absent fields keep their stored value; null or "" removes a username or a login password.
 */
export const CredentialBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    username: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], {
        description:
          'the repository server user (rest:, s3: URLs); null or "" removes it, and its login password',
      }),
    ),
    password: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, writeOnly: true, description: "opens the repository" }),
    ),
    login_password: Type.Optional(
      Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
        writeOnly: true,
        description:
          'the repository server login of `username` (rest-server htpasswd), when it is not the repository password; needs a username and an agent of protocol 11; null or "" removes it, and the password serves both again',
      }),
    ),
  },
  { additionalProperties: false },
);
