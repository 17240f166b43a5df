-- What one point is worth to the tenant, in its currency (tenants.currency):
-- the money per point the console's overview turns the outstanding points, the
-- expiry forecast and the breakage into. NULL: not set, and the overview shows
-- points only. At most six decimal places (0.000001 of a currency unit per point).
ALTER TABLE points_settings
  ADD COLUMN point_value numeric(14, 6) CHECK (point_value IS NULL OR point_value > 0);
