-- Issue 35.3: the seq of a job's last log line received before its result. An agent logs a little
-- after a job has ended (a backup's snapshot list and repository statistics): those lines come
-- after this seq and the job page shows them apart, as what happened after the job, so that the
-- log a page followed live and the one it shows on reload are the same. NULL: not known (a job
-- ended by the server, or before this column).
ALTER TABLE jobs ADD COLUMN log_end_seq integer;
