package builtin

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	// Embed the IANA tz database so timezone tools work on machines without
	// /usr/share/zoneinfo (containers, Windows).
	_ "time/tzdata"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// timeServer holds what the time tools share: the default location and the
// clock. now is a field so tests could pin it; production uses time.Now.
type timeServer struct {
	defaultLoc *time.Location
	now        func() time.Time
}

func newTimeServer(env map[string]string, opts Options) (*mcp.Server, error) {
	ts := &timeServer{defaultLoc: time.Local, now: time.Now}
	if tz := env["TZ"]; tz != "" {
		loc, err := loadLocation(tz)
		if err != nil {
			return nil, fmt.Errorf("TZ: %w", err)
		}
		ts.defaultLoc = loc
	}
	s := newServer("time",
		"Time and date tools. Timezones are IANA names (Europe/Paris, America/New_York, Asia/Tokyo, UTC). "+
			"Times accept RFC 3339 (2025-03-01T14:30:00Z), 'YYYY-MM-DD HH:MM[:SS]', 'YYYY-MM-DD', 'HH:MM' (today), a Unix timestamp, or 'now'.", nil)

	addTool(s, "time", opts, &mcp.Tool{
		Name:        "current_time",
		Description: "Get the current date and time (clock, today's date, weekday, UTC offset) in an IANA timezone such as Europe/London or America/Los_Angeles. Use it to answer 'what time is it in ...' or 'what is today's date'.",
		Annotations: readOnly("Current time"),
	}, ts.currentTime)
	addTool(s, "time", opts, &mcp.Tool{
		Name:        "convert_time",
		Description: "Convert a date/time from one timezone to another, e.g. 'what is 9:00 in New York when it is 15:00 in Berlin'. Returns the converted time with both UTC offsets and the hour difference.",
		Annotations: readOnly("Convert time between timezones"),
	}, ts.convertTime)
	addTool(s, "time", opts, &mcp.Tool{
		Name:        "time_difference",
		Description: "Compute the elapsed time between two dates or times: total days, hours, minutes and seconds, a calendar breakdown in years, months and days, and the number of weekdays (business days). Use it for 'how many days until ...', age, or durations.",
		Annotations: readOnly("Difference between two times"),
	}, ts.timeDifference)
	addTool(s, "time", opts, &mcp.Tool{
		Name:        "add_duration",
		Description: "Add or subtract a duration to a date/time: years, months, weeks, days, hours, minutes, seconds (e.g. '90d', '2w', '1y6mo', '-3h30m'). Use it for deadlines, due dates, 'what date is 100 days from now'.",
		Annotations: readOnly("Add duration to a date"),
	}, ts.addDuration)
	addTool(s, "time", opts, &mcp.Tool{
		Name:        "day_of_week",
		Description: "Get the weekday of a calendar date, with its ISO week number, day of the year, whether the year is a leap year and the number of days in the month.",
		Annotations: readOnly("Day of week"),
	}, ts.dayOfWeek)
	return s, nil
}

// loadLocation resolves an IANA name, accepting "local" and "utc" in any case
// and giving a hint on failure.
func loadLocation(name string) (*time.Location, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "local":
		return time.Local, nil
	case "utc", "z", "gmt":
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(strings.TrimSpace(name))
	if err != nil {
		return nil, fmt.Errorf("unknown timezone %s: use an IANA name such as Europe/Paris, America/New_York or UTC", quote(name))
	}
	return loc, nil
}

func (ts *timeServer) location(name string) (*time.Location, error) {
	if strings.TrimSpace(name) == "" {
		return ts.defaultLoc, nil
	}
	return loadLocation(name)
}

// timeLayouts are tried in order by parseTime for inputs without an explicit
// zone; the parsed wall clock is interpreted in the requested location.
func timeLayouts() []string {
	return []string{
		"2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04:05",
		"2006-01-02T15:04",
		"2006-01-02 15:04:05",
		"2006-01-02 15:04",
		"2006-01-02",
		"2006/01/02 15:04",
		"2006/01/02",
		"Jan 2, 2006 15:04",
		"Jan 2, 2006",
		"January 2, 2006",
		"2 Jan 2006",
		"2 January 2006",
	}
}

// The time tools work with years 1 to 9999: the range of RFC 3339 and of
// the four-digit years every input format uses. Outside it an input or a
// result is an error, so no computation ever meets a year it cannot print.
const (
	minYear = 1
	maxYear = 9999
)

// Unix seconds at the ends of the year range.
var (
	minUnix = time.Date(minYear, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxUnix = time.Date(maxYear, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

// checkRange fails for a time whose year (in its own location) is outside
// minYear..maxYear.
func checkRange(t time.Time, what string) error {
	if y := t.Year(); y < minYear || y > maxYear {
		return fmt.Errorf("%s is in year %d: the time tools work with years %d to %d", what, y, minYear, maxYear)
	}
	return nil
}

// maxTimeInput bounds a time argument; the longest accepted form is ~35
// characters.
const maxTimeInput = 100

// parseTime parses s in loc. Inputs carrying an offset (RFC 3339) keep it.
// The result is within minYear..maxYear.
func (ts *timeServer) parseTime(s string, loc *time.Location) (time.Time, error) {
	t, err := ts.parseAnyTime(s, loc)
	if err != nil {
		return time.Time{}, err
	}
	if err := checkRange(t, fmt.Sprintf("time %s", quote(strings.TrimSpace(s)))); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

func (ts *timeServer) parseAnyTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxTimeInput {
		return time.Time{}, fmt.Errorf("time %s is too long (over %d bytes): use e.g. 2025-03-01T14:30:00Z", quote(s), maxTimeInput)
	}
	now := ts.now().In(loc)
	switch strings.ToLower(s) {
	case "", "now":
		return now, nil
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, loc), nil
	case "tomorrow":
		y, m, d := now.Date()
		return time.Date(y, m, d+1, 0, 0, 0, 0, loc), nil
	case "yesterday":
		y, m, d := now.Date()
		return time.Date(y, m, d-1, 0, 0, 0, 0, loc), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02 15:04:05Z07:00", s); err == nil {
		return t, nil
	}
	for _, layout := range timeLayouts() {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	// A bare clock time means that time today in loc.
	for _, layout := range []string{"15:04:05", "15:04", "3:04pm", "3:04 pm", "3pm", "3 pm", "3:04PM", "3PM"} {
		if c, err := time.Parse(layout, s); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, c.Hour(), c.Minute(), c.Second(), 0, loc), nil
		}
	}
	// Unix timestamps: seconds, or milliseconds when too large to be seconds.
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > 1e11 || n < -1e11 {
			if n/1000 < minUnix || n/1000 > maxUnix {
				return time.Time{}, fmt.Errorf("timestamp %s (milliseconds) is outside the years %d to %d", quote(s), minYear, maxYear)
			}
			return time.UnixMilli(n).In(loc), nil
		}
		return time.Unix(n, 0).In(loc), nil
	}
	return time.Time{}, fmt.Errorf("cannot parse time %s: use RFC 3339 (2025-03-01T14:30:00Z), 'YYYY-MM-DD HH:MM', 'YYYY-MM-DD', 'HH:MM', a Unix timestamp or 'now'", quote(s))
}

// TimeInfo describes one instant in one timezone.
type TimeInfo struct {
	Timezone     string `json:"timezone" jsonschema:"IANA timezone name"`
	Datetime     string `json:"datetime" jsonschema:"RFC 3339 timestamp with offset"`
	Date         string `json:"date" jsonschema:"YYYY-MM-DD"`
	Time         string `json:"time" jsonschema:"HH:MM:SS, 24-hour clock"`
	DayOfWeek    string `json:"day_of_week"`
	UTCOffset    string `json:"utc_offset" jsonschema:"offset from UTC, e.g. +02:00"`
	Abbreviation string `json:"abbreviation" jsonschema:"zone abbreviation, e.g. CEST"`
	IsDST        bool   `json:"is_dst" jsonschema:"whether daylight saving time is in effect"`
	Unix         int64  `json:"unix" jsonschema:"seconds since 1970-01-01T00:00:00Z"`
}

func describeTime(t time.Time) TimeInfo {
	abbr, _ := t.Zone()
	return TimeInfo{
		Timezone:     t.Location().String(),
		Datetime:     t.Format(time.RFC3339),
		Date:         t.Format("2006-01-02"),
		Time:         t.Format("15:04:05"),
		DayOfWeek:    t.Weekday().String(),
		UTCOffset:    t.Format("-07:00"),
		Abbreviation: abbr,
		IsDST:        t.IsDST(),
		Unix:         t.Unix(),
	}
}

func (i TimeInfo) String() string {
	return fmt.Sprintf("%s %s %s (%s, UTC%s, %s)", i.DayOfWeek, i.Date, i.Time, i.Timezone, i.UTCOffset, i.Abbreviation)
}

type currentTimeIn struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA timezone name such as Europe/Paris, America/New_York, Asia/Tokyo or UTC; defaults to the hub's local timezone"`
}

func (ts *timeServer) currentTime(_ context.Context, _ *mcp.CallToolRequest, in currentTimeIn) (*mcp.CallToolResult, TimeInfo, error) {
	loc, err := ts.location(in.Timezone)
	if err != nil {
		return nil, TimeInfo{}, fmt.Errorf("current_time: %w", err)
	}
	info := describeTime(ts.now().In(loc))
	return textResult("%s", info), info, nil
}

type convertTimeIn struct {
	Time         string `json:"time" jsonschema:"the date/time to convert: 'HH:MM' (today), 'YYYY-MM-DD HH:MM', RFC 3339 or 'now'"`
	FromTimezone string `json:"from_timezone,omitempty" jsonschema:"IANA timezone the time is expressed in (ignored if time carries an offset); defaults to the hub's local timezone"`
	ToTimezone   string `json:"to_timezone" jsonschema:"IANA timezone to convert to, e.g. Asia/Kolkata"`
}

type convertTimeOut struct {
	Source          TimeInfo `json:"source"`
	Target          TimeInfo `json:"target"`
	HourDifference  float64  `json:"hour_difference" jsonschema:"target UTC offset minus source UTC offset, in hours"`
	DayChangeTarget string   `json:"day_change,omitempty" jsonschema:"'next day' or 'previous day' when the date differs"`
}

func (ts *timeServer) convertTime(_ context.Context, _ *mcp.CallToolRequest, in convertTimeIn) (*mcp.CallToolResult, convertTimeOut, error) {
	from, err := ts.location(in.FromTimezone)
	if err != nil {
		return nil, convertTimeOut{}, fmt.Errorf("convert_time: from_timezone: %w", err)
	}
	if strings.TrimSpace(in.ToTimezone) == "" {
		return nil, convertTimeOut{}, fmt.Errorf("convert_time: to_timezone is required")
	}
	to, err := loadLocation(in.ToTimezone)
	if err != nil {
		return nil, convertTimeOut{}, fmt.Errorf("convert_time: to_timezone: %w", err)
	}
	t, err := ts.parseTime(in.Time, from)
	if err != nil {
		return nil, convertTimeOut{}, fmt.Errorf("convert_time: %w", err)
	}
	src, dst := t, t.In(to)
	if err := checkRange(dst, "the converted time"); err != nil {
		return nil, convertTimeOut{}, fmt.Errorf("convert_time: %w", err)
	}
	_, so := src.Zone()
	_, do := dst.Zone()
	out := convertTimeOut{Source: describeTime(src), Target: describeTime(dst), HourDifference: float64(do-so) / 3600}
	sd, dd := src.Format("2006-01-02"), dst.Format("2006-01-02")
	switch {
	case dd > sd:
		out.DayChangeTarget = "next day"
	case dd < sd:
		out.DayChangeTarget = "previous day"
	}
	text := fmt.Sprintf("%s\n= %s\n(%+g h)", out.Source, out.Target, out.HourDifference)
	if out.DayChangeTarget != "" {
		text += ", " + out.DayChangeTarget
	}
	return textResult("%s", text), out, nil
}

type timeDifferenceIn struct {
	Start    string `json:"start" jsonschema:"start date/time, e.g. 2025-01-01 or 2025-01-01 09:00 or now"`
	End      string `json:"end" jsonschema:"end date/time, e.g. 2025-12-25 or now"`
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA timezone for inputs without an offset; defaults to the hub's local timezone"`
}

type timeDifferenceOut struct {
	Start        string  `json:"start"`
	End          string  `json:"end"`
	TotalSeconds float64 `json:"total_seconds" jsonschema:"end minus start in seconds (negative if end is before start)"`
	TotalMinutes float64 `json:"total_minutes"`
	TotalHours   float64 `json:"total_hours"`
	TotalDays    float64 `json:"total_days"`
	Years        int     `json:"years" jsonschema:"calendar breakdown: whole years"`
	Months       int     `json:"months" jsonschema:"calendar breakdown: whole months after the years"`
	Days         int     `json:"days" jsonschema:"calendar breakdown: whole days after the months"`
	Hours        int     `json:"hours"`
	Minutes      int     `json:"minutes"`
	Seconds      int     `json:"seconds"`
	Weekdays     int     `json:"weekdays" jsonschema:"Monday-Friday days from start (inclusive) to end (exclusive)"`
	Human        string  `json:"human" jsonschema:"readable summary, e.g. 1 year, 2 months, 3 days"`
}

func (ts *timeServer) timeDifference(ctx context.Context, _ *mcp.CallToolRequest, in timeDifferenceIn) (*mcp.CallToolResult, timeDifferenceOut, error) {
	loc, err := ts.location(in.Timezone)
	if err != nil {
		return nil, timeDifferenceOut{}, fmt.Errorf("time_difference: %w", err)
	}
	a, err := ts.parseTime(in.Start, loc)
	if err != nil {
		return nil, timeDifferenceOut{}, fmt.Errorf("time_difference: start: %w", err)
	}
	b, err := ts.parseTime(in.End, loc)
	if err != nil {
		return nil, timeDifferenceOut{}, fmt.Errorf("time_difference: end: %w", err)
	}
	// Spans up to 9,998 years do not fit a time.Duration (±292 years):
	// totals come from Unix seconds.
	secs := float64(b.Unix()-a.Unix()) + float64(b.Nanosecond()-a.Nanosecond())/1e9
	out := timeDifferenceOut{
		Start:        a.Format(time.RFC3339),
		End:          b.Format(time.RFC3339),
		TotalSeconds: secs,
		TotalMinutes: secs / 60,
		TotalHours:   secs / 3600,
		TotalDays:    secs / 86400,
	}
	lo, hi, sign := a, b.In(a.Location()), 1
	if hi.Before(lo) {
		lo, hi, sign = hi, lo, -1
	}
	y, mo, dd, rest := calendarDiff(lo, hi)
	out.Years, out.Months, out.Days = sign*y, sign*mo, sign*dd
	out.Hours = sign * int(rest/time.Hour)
	out.Minutes = sign * int(rest%time.Hour/time.Minute)
	out.Seconds = sign * int(rest%time.Minute/time.Second)
	out.Weekdays = sign * weekdaysBetween(lo, hi)
	out.Human = humanSpan(y, mo, dd, rest)
	if sign < 0 {
		out.Human += " (end is before start)"
	}
	return textResult("%s\nTotal: %s days, %s hours, %s minutes; %d weekdays.",
		out.Human, fmtNum(out.TotalDays), fmtNum(out.TotalHours), fmtNum(out.TotalMinutes), out.Weekdays), out, nil
}

// calendarDiff splits hi-lo (lo <= hi) into whole years, months, days and a
// remainder, counting with addMonths and AddDate so that month lengths,
// leap years and DST are right. It costs the same for any span: the month
// and day counts are computed from the calendar dates and corrected by at
// most a step or two (the clock time of hi may be earlier than lo's).
func calendarDiff(lo, hi time.Time) (years, months, days int, rest time.Duration) {
	ly, lm, _ := lo.Date()
	hy, hm, _ := hi.Date()
	total := (hy-ly)*12 + int(hm-lm) // addMonths(lo, total) is in hi's month
	for total > 0 && addMonths(lo, total).After(hi) {
		total--
	}
	base := addMonths(lo, total)
	days = dayNumber(hi) - dayNumber(base) // base.AddDate(0, 0, days) is on hi's date
	for days > 0 && base.AddDate(0, 0, days).After(hi) {
		days--
	}
	return total / 12, total % 12, days, hi.Sub(base.AddDate(0, 0, days))
}

// dayNumber is the civil date of t (in its location) as days since
// 1970-01-01, exact for every year.
func dayNumber(t time.Time) int {
	y, m, d := t.Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// addMonths adds n calendar months, clamping to the last day of the target
// month (Jan 31 + 1 month = Feb 28), as people and most date libraries do;
// time.AddDate would normalise to Mar 3.
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// weekdaysBetween counts Monday-Friday dates in [lo, hi): five per whole
// week, plus the weekdays among the last days%7 dates. O(1) in the span.
func weekdaysBetween(lo, hi time.Time) int {
	days := dayNumber(hi) - dayNumber(lo)
	n := days / 7 * 5
	for i, wd := 0, lo.Weekday(); i < days%7; i, wd = i+1, (wd+1)%7 { // at most 6 steps
		if wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return n
}

func humanSpan(y, mo, d int, rest time.Duration) string {
	var parts []string
	add := func(n int, unit string) {
		if n != 0 {
			if n != 1 {
				unit += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, unit))
		}
	}
	add(y, "year")
	add(mo, "month")
	add(d, "day")
	add(int(rest/time.Hour), "hour")
	add(int(rest%time.Hour/time.Minute), "minute")
	add(int(rest%time.Minute/time.Second), "second")
	if len(parts) == 0 {
		return "0 seconds"
	}
	return strings.Join(parts, ", ")
}

type addDurationIn struct {
	Time     string `json:"time,omitempty" jsonschema:"starting date/time; defaults to now"`
	Duration string `json:"duration" jsonschema:"duration to add; units y, mo, w, d, h, m, s, ms, combinable, negative to subtract: '90d', '2w3d', '1y6mo', '-1h30m', '45 minutes'"`
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA timezone for the input and result; defaults to the hub's local timezone"`
}

type addDurationOut struct {
	Start  TimeInfo `json:"start"`
	Result TimeInfo `json:"result"`
}

func (ts *timeServer) addDuration(_ context.Context, _ *mcp.CallToolRequest, in addDurationIn) (*mcp.CallToolResult, addDurationOut, error) {
	loc, err := ts.location(in.Timezone)
	if err != nil {
		return nil, addDurationOut{}, fmt.Errorf("add_duration: %w", err)
	}
	t, err := ts.parseTime(in.Time, loc)
	if err != nil {
		return nil, addDurationOut{}, fmt.Errorf("add_duration: %w", err)
	}
	cd, err := parseCalendarDuration(in.Duration)
	if err != nil {
		return nil, addDurationOut{}, fmt.Errorf("add_duration: %w", err)
	}
	r := cd.addTo(t)
	if err := checkRange(r, "the result"); err != nil {
		return nil, addDurationOut{}, fmt.Errorf("add_duration: %w", err)
	}
	out := addDurationOut{Start: describeTime(t), Result: describeTime(r)}
	return textResult("%s + %s = %s", out.Start, strings.TrimSpace(in.Duration), out.Result), out, nil
}

// calendarDuration keeps calendar units apart from clock time, because a
// month or a day (across a DST change) has no fixed length.
type calendarDuration struct {
	years, months, days int
	clock               time.Duration
}

func (c calendarDuration) addTo(t time.Time) time.Time {
	return addMonths(t, 12*c.years+c.months).AddDate(0, 0, c.days).Add(c.clock)
}

var durationPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([a-zµμ]+)\s*,?\s*(?:and\s+)?`) })

// Bounds of a duration. Calendar parts may span the whole year range;
// clock parts (h, m, s, and fractional days or weeks) are a time.Duration,
// which holds ±292 years.
const (
	maxDurationInput = 200 // bytes; "1y 2mo 3w 4d 5h 6m 7s" is 21
	maxDurationYears = maxYear - minYear + 1
	maxDurationDays  = maxDurationYears * 366
)

// parseCalendarDuration parses "1y2mo3w4d5h6m7s8ms" and word forms
// ("3 days 4 hours"); a leading sign applies to the whole duration.
func parseCalendarDuration(s string) (calendarDuration, error) {
	orig := s
	if len(s) > maxDurationInput {
		return calendarDuration{}, fmt.Errorf("duration %s is too long (over %d bytes): use e.g. '1y6mo' or '3d12h'", quote(orig), maxDurationInput)
	}
	s = strings.ToLower(strings.TrimSpace(s))
	sign := 1
	if strings.HasPrefix(s, "-") {
		sign, s = -1, strings.TrimSpace(s[1:])
	} else if strings.HasPrefix(s, "+") {
		s = strings.TrimSpace(s[1:])
	}
	if s == "" {
		return calendarDuration{}, fmt.Errorf("empty duration: use e.g. '90d', '2w', '1y6mo', '-3h30m'")
	}
	tooLong := func(unit string) error {
		return fmt.Errorf("duration %s is too long: %s can span at most %d years (the time tools work with years %d to %d)", quote(orig), unit, maxDurationYears, minYear, maxYear)
	}
	var c calendarDuration
	var clock float64 // nanoseconds, summed as a float so that it cannot wrap
	for s != "" {
		m := durationPart().FindStringSubmatch(s)
		if m == nil {
			return calendarDuration{}, fmt.Errorf("cannot parse duration %s near %s: use numbers with units y, mo, w, d, h, m, s, ms (e.g. '1y6mo', '3d12h')", quote(orig), quote(s))
		}
		s = s[len(m[0]):]
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return calendarDuration{}, fmt.Errorf("duration %s: %w", quote(orig), err)
		}
		whole := v == math.Trunc(v)
		needWhole := func(unit string) error {
			if !whole {
				return fmt.Errorf("duration %s: %s must be a whole number", quote(orig), unit)
			}
			return nil
		}
		switch m[2] {
		case "y", "yr", "yrs", "year", "years":
			if err := needWhole("years"); err != nil {
				return calendarDuration{}, err
			}
			if v > maxDurationYears || abs(c.years) > maxDurationYears-int(v) {
				return calendarDuration{}, tooLong("years")
			}
			c.years += sign * int(v)
		case "mo", "mon", "month", "months":
			if err := needWhole("months"); err != nil {
				return calendarDuration{}, err
			}
			if v > 12*maxDurationYears || abs(c.months) > 12*maxDurationYears-int(v) {
				return calendarDuration{}, tooLong("months")
			}
			c.months += sign * int(v)
		case "w", "wk", "wks", "week", "weeks", "d", "day", "days":
			perUnit := 1.0
			if m[2][0] == 'w' {
				perUnit = 7
			}
			if !whole {
				clock += float64(sign) * v * perUnit * 24 * float64(time.Hour)
				break
			}
			if v*perUnit > maxDurationDays || abs(c.days) > maxDurationDays-int(v*perUnit) {
				return calendarDuration{}, tooLong("days and weeks")
			}
			c.days += sign * int(v*perUnit)
		default:
			unit, ok := clockUnit(m[2])
			if !ok {
				return calendarDuration{}, fmt.Errorf("duration %s: unknown unit %s (use y, mo, w, d, h, m, s, ms)", quote(orig), quote(m[2]))
			}
			clock += float64(sign) * v * float64(unit)
		}
		if math.Abs(clock) >= math.MaxInt64 {
			return calendarDuration{}, fmt.Errorf("duration %s is too long: hours, minutes and seconds (and fractional days) can add up to at most 292 years; use y, mo, w or whole days for longer spans", quote(orig))
		}
	}
	c.clock = time.Duration(clock)
	return c, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// clockUnit returns the length of a fixed-length duration unit.
func clockUnit(name string) (time.Duration, bool) {
	switch name {
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "ms", "millisecond", "milliseconds":
		return time.Millisecond, true
	case "us", "µs", "μs", "microsecond", "microseconds":
		return time.Microsecond, true
	case "ns", "nanosecond", "nanoseconds":
		return time.Nanosecond, true
	}
	return 0, false
}

type dayOfWeekIn struct {
	Date string `json:"date" jsonschema:"calendar date, e.g. 2025-07-04, July 4, 2025, today or tomorrow"`
}

type dayOfWeekOut struct {
	Date        string `json:"date"`
	DayOfWeek   string `json:"day_of_week"`
	ISOYear     int    `json:"iso_year"`
	ISOWeek     int    `json:"iso_week"`
	DayOfYear   int    `json:"day_of_year"`
	IsLeapYear  bool   `json:"is_leap_year"`
	DaysInMonth int    `json:"days_in_month"`
	IsWeekend   bool   `json:"is_weekend"`
}

func (ts *timeServer) dayOfWeek(_ context.Context, _ *mcp.CallToolRequest, in dayOfWeekIn) (*mcp.CallToolResult, dayOfWeekOut, error) {
	t, err := ts.parseTime(in.Date, ts.defaultLoc)
	if err != nil {
		return nil, dayOfWeekOut{}, fmt.Errorf("day_of_week: %w", err)
	}
	y, w := t.ISOWeek()
	year := t.Year()
	out := dayOfWeekOut{
		Date:        t.Format("2006-01-02"),
		DayOfWeek:   t.Weekday().String(),
		ISOYear:     y,
		ISOWeek:     w,
		DayOfYear:   t.YearDay(),
		IsLeapYear:  year%4 == 0 && (year%100 != 0 || year%400 == 0),
		DaysInMonth: time.Date(year, t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day(),
		IsWeekend:   t.Weekday() == time.Saturday || t.Weekday() == time.Sunday,
	}
	return textResult("%s is a %s (ISO week %d of %d, day %d of the year).", out.Date, out.DayOfWeek, w, y, out.DayOfYear), out, nil
}
