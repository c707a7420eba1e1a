-- Researches can be canceled and asked to cancel from another process.
ALTER TABLE researches DROP CONSTRAINT researches_status_check;
ALTER TABLE researches ADD CONSTRAINT researches_status_check
    CHECK (status IN ('pending','processing','completed','failed','canceled'));
ALTER TABLE researches ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;
