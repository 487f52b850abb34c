-- Single sign-on users (issue 18.1): a user created by an OpenID Connect sign-in is keyed by the
-- provider's issuer and subject (never by a username, which a provider lets people choose) and
-- has no local password; a local user has a password and no subject.
ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;
--> statement-breakpoint
ALTER TABLE users ADD COLUMN sso_issuer text;
--> statement-breakpoint
ALTER TABLE users ADD COLUMN sso_subject text;
--> statement-breakpoint
ALTER TABLE users ADD CONSTRAINT users_sso_check CHECK (
  (sso_issuer IS NULL) = (sso_subject IS NULL) AND (password_hash IS NOT NULL OR sso_subject IS NOT NULL)
);
--> statement-breakpoint
CREATE UNIQUE INDEX users_sso_key ON users (sso_issuer, sso_subject) WHERE sso_subject IS NOT NULL;
