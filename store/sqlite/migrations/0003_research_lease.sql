ALTER TABLE researches ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE researches ADD COLUMN lease_until TEXT;
