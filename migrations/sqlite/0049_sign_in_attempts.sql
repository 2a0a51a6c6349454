-- A sign-in attempt is counted before its password is checked, so that attempts made at
-- the same moment count each other (counted after the check, any number of parallel
-- guesses each saw fewer failures than the lockout's and were all checked). Its rows are
-- taken back by their attempt's id when the password was right or the attempt was locked
-- out; rows of an earlier release, without one, are failures as before.
ALTER TABLE login_failures ADD COLUMN attempt_id TEXT;
