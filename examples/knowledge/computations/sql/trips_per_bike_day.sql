-- Sanctioned computation: trips per bike per day (TPBD) over a date range.
-- Referenced by computations/trips-per-bike-day.md; do not edit without
-- re-verifying that concept. Bind parameters: @start_date, @end_date,
-- @bike_type (nullable).
WITH valid_trips AS (
  SELECT
    trip_date,
    COUNT(*) AS trips
  FROM `spokeway-prod.analytics.trips`
  WHERE trip_date BETWEEN @start_date AND @end_date
    AND NOT is_staff_trip
    AND NOT is_test
    AND NOT (duration_s < 60 AND COALESCE(end_station_id = start_station_id, FALSE))
    AND duration_s <= 86400
    AND (@bike_type IS NULL OR bike_type = @bike_type)
  GROUP BY trip_date
),
bikes_in_service AS (
  SELECT
    service_date,
    COUNT(DISTINCT bike_id) AS bikes
  FROM `spokeway-prod.analytics.bike_days`
  WHERE service_date BETWEEN @start_date AND @end_date
    AND status_at_open = 'in_service'
    AND (@bike_type IS NULL OR bike_type = @bike_type)
  GROUP BY service_date
)
SELECT
  SAFE_DIVIDE(SUM(COALESCE(t.trips, 0)), SUM(b.bikes)) AS trips_per_bike_per_day
FROM bikes_in_service AS b
LEFT JOIN valid_trips AS t
  ON t.trip_date = b.service_date
