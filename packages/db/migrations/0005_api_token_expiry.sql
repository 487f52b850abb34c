-- Optional expiry of personal API tokens: a token past expires_at is refused like a revoked one.
-- A nullable column without a default only changes the catalogue (no table rewrite), is
-- transactional, and the runner's advisory lock serialises two servers starting together.
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;
