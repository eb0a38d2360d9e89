package builtin

import (
	"math/rand/v2"
	"strings"
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

// TestTimeExtremes: the year range (1 to 9999) bounds every input and
// result with a clear error, and a span of the whole range is computed at
// once. time_difference of the two int64 extremes used to count hundreds of
// millions of years one at a time, for minutes, ignoring its context
// (issue 11): the call must now answer within the client's deadline.
func TestTimeExtremes(t *testing.T) {
	cs, _ := connect(t, "time", map[string]string{"TZ": "UTC"})
	runToolCases(t, cs, []toolCase{
		{name: "issue 11 int64 extremes", tool: "time_difference", args: map[string]any{"start": "-9223372036854775808", "end": "9223372036854775807"},
			wantErr: "outside the years 1 to 9999"},
		{name: "whole range", tool: "time_difference", args: map[string]any{"start": "0001-01-01", "end": "9999-12-31T23:59:59Z"},
			fields: map[string]string{"years": "9998", "months": "11", "days": "30", "hours": "23", "seconds": "59", "total_days": "3652058.999988426", "weekdays": "2608614"}},
		{name: "whole range backwards", tool: "time_difference", args: map[string]any{"start": "9999-12-31", "end": "0001-01-01"},
			fields: map[string]string{"years": "-9998", "months": "-11", "days": "-30"}},
		{name: "year 0", tool: "day_of_week", args: map[string]any{"date": "0000-06-01"}, wantErr: "years 1 to 9999"},
		{name: "seconds timestamp", tool: "day_of_week", args: map[string]any{"date": "-62135596800"}, fields: map[string]string{"date": `"0001-01-01"`}},
		{name: "milliseconds timestamp", tool: "day_of_week", args: map[string]any{"date": "253402300799999"}, fields: map[string]string{"date": `"9999-12-31"`}},
		{name: "milliseconds past the range", tool: "day_of_week", args: map[string]any{"date": "253402300800000"}, wantErr: "outside the years"},
		{name: "long input", tool: "day_of_week", args: map[string]any{"date": strings.Repeat("9", 5000)}, wantErr: "too long"},
		{name: "convert into year 10000", tool: "convert_time", args: map[string]any{"time": "9999-12-31T23:00:00Z", "to_timezone": "Pacific/Kiritimati"}, wantErr: "year 10000"},
		{name: "add past the range", tool: "add_duration", args: map[string]any{"time": "9999-06-01", "duration": "1y"}, wantErr: "the result is in year 10000"},
		{name: "add the whole range", tool: "add_duration", args: map[string]any{"time": "0001-01-01", "duration": "9998y11mo30d"}, fields: map[string]string{"result.date": `"9999-12-31"`}},
		{name: "subtract before year 1", tool: "add_duration", args: map[string]any{"time": "0001-01-01", "duration": "-1d"}, wantErr: "year 0"},
		{name: "huge years", tool: "add_duration", args: map[string]any{"duration": "99999999999999999999999y"}, wantErr: "at most 9999 years"},
		{name: "huge months", tool: "add_duration", args: map[string]any{"duration": "9999999999999mo"}, wantErr: "at most 9999 years"},
		{name: "huge days", tool: "add_duration", args: map[string]any{"duration": "-4000000d"}, wantErr: "at most 9999 years"},
		{name: "years add up past the bound", tool: "add_duration", args: map[string]any{"duration": "9000y 9000y"}, wantErr: "at most 9999 years"},
		{name: "huge hours", tool: "add_duration", args: map[string]any{"duration": "2562048h"}, wantErr: "at most 292 years"},
		{name: "hours add up past the bound", tool: "add_duration", args: map[string]any{"duration": "2000000h 2000000h"}, wantErr: "at most 292 years"},
		{name: "fractional days past the bound", tool: "add_duration", args: map[string]any{"duration": "200000.5d"}, wantErr: "at most 292 years"},
		{name: "many parts", tool: "add_duration", args: map[string]any{"duration": strings.Repeat("1s", 1000)}, wantErr: "too long"},
		{name: "bad timezone quoted short", tool: "current_time", args: map[string]any{"timezone": strings.Repeat("Europe/", 1000)}, wantErr: "(7000 bytes)"},
		{name: "path-like timezone", tool: "current_time", args: map[string]any{"timezone": "../../../../etc/passwd"}, wantErr: "unknown timezone"},
	})
}

// TestCalendarDiff checks the constant-time calendar breakdown against the
// step-by-step definition, in zones with DST, month ends and leap days.
func TestCalendarDiff(t *testing.T) {
	slow := func(lo, hi time.Time) (years, months, days int, rest time.Duration) {
		for !addMonths(lo, 12*(years+1)).After(hi) {
			years++
		}
		for !addMonths(lo, 12*years+months+1).After(hi) {
			months++
		}
		base := addMonths(lo, 12*years+months)
		for !base.AddDate(0, 0, days+1).After(hi) {
			days++
		}
		return years, months, days, hi.Sub(base.AddDate(0, 0, days))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, zone := range []string{"UTC", "Europe/Paris", "America/Sao_Paulo", "Australia/Lord_Howe", "Pacific/Apia"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		base := time.Date(1990, 1, 1, 0, 0, 0, 0, loc)
		for range 2000 {
			lo := base.Add(time.Duration(rng.Int64N(int64(40 * 365 * 24 * time.Hour))))
			hi := lo.Add(time.Duration(rng.Int64N(int64(3 * 365 * 24 * time.Hour))))
			if rng.IntN(4) == 0 { // same clock time, other date: the corrections' edge
				hi = time.Date(hi.Year(), hi.Month(), hi.Day(), lo.Hour(), lo.Minute(), lo.Second(), lo.Nanosecond(), loc)
				if hi.Before(lo) {
					continue
				}
			}
			y, m, d, r := calendarDiff(lo, hi)
			wy, wm, wd, wr := slow(lo, hi)
			if y != wy || m != wm || d != wd || r != wr {
				t.Fatalf("%s: calendarDiff(%s, %s) = %d %d %d %s, want %d %d %d %s", zone, lo, hi, y, m, d, r, wy, wm, wd, wr)
			}
		}
	}
}
