-- The hostname an agent reports in its hello, kept apart from the name the host was enrolled
-- under (issue 13, finding 9): an agent could rename itself to another host's name, and the
-- in-place restore confirmation is typed against the name. Null until the next hello; until then
-- the name stands for it. A nullable column without a default only changes the catalogue.
ALTER TABLE hosts ADD COLUMN reported_hostname text;
