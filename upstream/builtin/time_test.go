package builtin

import (
	"testing"
	"time"
)

func TestTimeTools(t *testing.T) {
	cs, _ := connect(t, "time", map[string]string{"TZ": "UTC"})
	runToolCases(t, cs, []toolCase{
		{name: "current utc", tool: "current_time", args: map[string]any{"timezone": "UTC"}, fields: map[string]string{"timezone": `"UTC"`, "utc_offset": `"+00:00"`}},
		{name: "current tokyo", tool: "current_time", args: map[string]any{"timezone": "Asia/Tokyo"}, fields: map[string]string{"utc_offset": `"+09:00"`, "is_dst": "false"}},
		{name: "current default", tool: "current_time", args: map[string]any{}, fields: map[string]string{"timezone": `"UTC"`}},
		{name: "bad zone", tool: "current_time", args: map[string]any{"timezone": "Mars/Olympus"}, wantErr: "unknown timezone"},
		{name: "convert summer", tool: "convert_time",
			args:   map[string]any{"time": "2025-07-01 15:00", "from_timezone": "Europe/Berlin", "to_timezone": "America/New_York"},
			fields: map[string]string{"target.time": `"09:00:00"`, "hour_difference": "-6", "source.abbreviation": `"CEST"`, "target.is_dst": "true"}},
		{name: "convert day change", tool: "convert_time",
			args:   map[string]any{"time": "2025-01-15T23:30:00Z", "to_timezone": "Asia/Kolkata"},
			fields: map[string]string{"target.date": `"2025-01-16"`, "target.time": `"05:00:00"`, "day_change": `"next day"`}},
		{name: "convert missing target", tool: "convert_time", args: map[string]any{"time": "now", "to_timezone": ""}, wantErr: "to_timezone is required"},
		{name: "convert bad time", tool: "convert_time", args: map[string]any{"time": "half past nine", "to_timezone": "UTC"}, wantErr: "cannot parse time"},
		{name: "difference", tool: "time_difference", args: map[string]any{"start": "2024-01-31", "end": "2025-03-01 12:30"},
			fields: map[string]string{"years": "1", "months": "1", "days": "1", "hours": "12", "minutes": "30", "total_days": "395.5208333333333"},
			text:   []string{"1 year, 1 month, 1 day, 12 hours, 30 minutes"}},
		{name: "weekdays", tool: "time_difference", args: map[string]any{"start": "2025-06-02", "end": "2025-06-16"}, // Monday to Monday
			fields: map[string]string{"weekdays": "10", "total_days": "14"}},
		{name: "negative difference", tool: "time_difference", args: map[string]any{"start": "2025-01-10", "end": "2025-01-03"},
			fields: map[string]string{"days": "-7", "weekdays": "-5"}, text: []string{"end is before start"}},
		{name: "add months clamps", tool: "add_duration", args: map[string]any{"time": "2025-01-31", "duration": "1mo"},
			fields: map[string]string{"result.date": `"2025-02-28"`}},
		{name: "add leap year clamps", tool: "add_duration", args: map[string]any{"time": "2024-02-29", "duration": "1y"},
			fields: map[string]string{"result.date": `"2025-02-28"`}},
		{name: "add mixed", tool: "add_duration", args: map[string]any{"time": "2025-03-01 10:00", "duration": "1y2w3d4h30m"},
			fields: map[string]string{"result.date": `"2026-03-18"`, "result.time": `"14:30:00"`}},
		{name: "add words", tool: "add_duration", args: map[string]any{"time": "2025-03-01", "duration": "90 days"},
			fields: map[string]string{"result.date": `"2025-05-30"`}},
		{name: "subtract", tool: "add_duration", args: map[string]any{"time": "2025-03-01 00:00", "duration": "-1h30m"},
			fields: map[string]string{"result.date": `"2025-02-28"`, "result.time": `"22:30:00"`}},
		{name: "dst aware", tool: "add_duration", args: map[string]any{"time": "2025-03-29 12:00", "duration": "1d", "timezone": "Europe/Paris"},
			fields: map[string]string{"result.time": `"12:00:00"`, "result.utc_offset": `"+02:00"`}},
		{name: "bad duration", tool: "add_duration", args: map[string]any{"duration": "soon"}, wantErr: "cannot parse duration"},
		{name: "fractional month", tool: "add_duration", args: map[string]any{"duration": "1.5mo"}, wantErr: "whole number"},
		{name: "day of week", tool: "day_of_week", args: map[string]any{"date": "2024-02-29"},
			fields: map[string]string{"day_of_week": `"Thursday"`, "is_leap_year": "true", "days_in_month": "29", "iso_week": "9", "day_of_year": "60"}},
		{name: "day of week words", tool: "day_of_week", args: map[string]any{"date": "July 4, 2025"}, fields: map[string]string{"day_of_week": `"Friday"`, "is_weekend": "false"}},
		{name: "missing date", tool: "day_of_week", args: map[string]any{}, wantErr: "date"},
	})
}

func TestParseTimeForms(t *testing.T) {
	fixed := time.Date(2025, 6, 15, 10, 20, 30, 0, time.UTC)
	ts := &timeServer{defaultLoc: time.UTC, now: func() time.Time { return fixed }}
	paris, _ := time.LoadLocation("Europe/Paris")
	for _, tc := range []struct {
		in   string
		loc  *time.Location
		want string
	}{
		{"now", time.UTC, "2025-06-15T10:20:30Z"},
		{"tomorrow", time.UTC, "2025-06-16T00:00:00Z"},
		{"14:05", paris, "2025-06-15T14:05:00+02:00"},
		{"3pm", time.UTC, "2025-06-15T15:00:00Z"},
		{"2025-01-02 03:04:05", paris, "2025-01-02T03:04:05+01:00"},
		{"2025-01-02T03:04:05-05:00", paris, "2025-01-02T03:04:05-05:00"},
		{"1700000000", time.UTC, "2023-11-14T22:13:20Z"},
		{"1700000000000", time.UTC, "2023-11-14T22:13:20Z"},
		{"2 Jan 2025", time.UTC, "2025-01-02T00:00:00Z"},
	} {
		got, err := ts.parseTime(tc.in, tc.loc)
		if err != nil {
			t.Errorf("parseTime(%q): %v", tc.in, err)
			continue
		}
		if s := got.Format(time.RFC3339); s != tc.want {
			t.Errorf("parseTime(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
}

func TestWeekdaysBetween(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2025-06-02", "2025-06-02", 0},
		{"2025-06-06", "2025-06-09", 1}, // Fri -> Mon
		{"2025-06-07", "2025-06-09", 0}, // Sat -> Mon
		{"2025-01-01", "2026-01-01", 261},
	} {
		a, _ := time.Parse("2006-01-02", tc.a)
		b, _ := time.Parse("2006-01-02", tc.b)
		if got := weekdaysBetween(a, b); got != tc.want {
			t.Errorf("weekdaysBetween(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestTimeBadTZEnv(t *testing.T) {
	if _, err := New("time", map[string]string{"TZ": "Nowhere/Land"}, Options{}); err == nil {
		t.Fatal("New(time) with bad TZ succeeded")
	}
}
