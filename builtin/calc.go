package builtin

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// calcServer holds the unit table, built once per server, on its first
// conversion.
type calcServer struct {
	units func() map[string]unitDef
}

func newCalcServer(_ map[string]string, opts Options) (*mcp.Server, error) {
	cs := &calcServer{units: sync.OnceValue(unitTable)}
	s := newServer("calc",
		"Exact, offline arithmetic. Prefer these tools over mental math: evaluate expressions, convert units, compute percentages.", nil)

	addTool(s, "calc", opts, &mcp.Tool{
		Name: "evaluate",
		Description: "Calculate the value of an arithmetic / math expression safely (a calculator). Operators + - * / % ^ (power) and parentheses; " +
			"functions sqrt, cbrt, abs, round(x[,digits]), floor, ceil, trunc, min, max, log (base 10, or log(x,base)), log2, ln, exp, sin, cos, tan, asin, acos, atan, atan2, deg, rad, hypot, pow, fact; constants pi, e, tau. " +
			"Trigonometric functions use radians. Example: sqrt(2)^2 + 3*(4-1) % 5.",
		Annotations: readOnly("Evaluate math expression"),
	}, cs.evaluate)

	addTool(s, "calc", opts, &mcp.Tool{
		Name: "convert_units",
		Description: "Convert a value between units of measurement: length/distance (mm, cm, m, km, in, ft, yd, mi, nmi), mass/weight (mg, g, kg, t, oz, lb, st), " +
			"temperature (C, F, K), volume (ml, l, tsp, tbsp, floz, cup, pt, qt, gal, imp_gal, m3), area (m2, km2, ha, acre, ft2, mi2), speed (m/s, km/h, mph, knot), " +
			"data size (bit, B, KB, MB, GB, TB as powers of 1000; KiB, MiB, GiB, TiB as powers of 1024; kbit, Mbit, Gbit) and time (ms, s, min, h, day, week, month, year). Unit names are case-insensitive.",
		Annotations: readOnly("Convert units"),
	}, cs.convertUnits)

	pctSchema := func() (*jsonschema.Schema, error) {
		s, err := jsonschema.For[percentageIn](nil)
		if err != nil {
			return nil, fmt.Errorf("percentage schema: %w", err)
		}
		s.Properties["operation"].Enum = []any{"percent_of", "what_percent", "change", "increase", "decrease"}
		return s, nil
	}
	if err := addToolSchema(s, "calc", opts, &mcp.Tool{
		Name: "percentage",
		Description: "Percentage calculations: 'percent_of' (a% of b: 15% of 80 = 12), 'what_percent' (a is what percent of b: 12 of 80 = 15%), " +
			"'change' (percent increase or decrease from a to b: 80 to 92 = +15%), 'increase' (a plus b%: 80 + 15% = 92, e.g. tax or tip), 'decrease' (a minus b%: 80 - 15% = 68, e.g. discount).",
		Annotations: readOnly("Percentage helpers"),
	}, cs.percentage, pctSchema); err != nil {
		return nil, err
	}
	return s, nil
}

type evaluateIn struct {
	Expression string `json:"expression" jsonschema:"arithmetic expression, e.g. (3 + 4) * 2^10 / sqrt(16)"`
}

type evaluateOut struct {
	Expression string  `json:"expression"`
	Result     float64 `json:"result"`
	Formatted  string  `json:"formatted" jsonschema:"result rounded to 12 significant digits"`
}

func (cs *calcServer) evaluate(_ context.Context, _ *mcp.CallToolRequest, in evaluateIn) (*mcp.CallToolResult, evaluateOut, error) {
	v, err := evalExpr(in.Expression)
	if err != nil {
		return nil, evaluateOut{}, fmt.Errorf("evaluate %s: %w", quote(in.Expression), err)
	}
	out := evaluateOut{Expression: in.Expression, Result: v, Formatted: fmtNum(v)}
	return textResult("%s = %s", strings.TrimSpace(in.Expression), out.Formatted), out, nil
}

// unitDef converts to the category's base unit: base = value*factor + offset.
// Only temperatures use offset.
type unitDef struct {
	category string
	name     string // canonical display name
	factor   float64
	offset   float64
}

// unitTable maps lower-cased aliases to unit definitions.
func unitTable() map[string]unitDef {
	t := map[string]unitDef{}
	add := func(category string, factor, offset float64, names ...string) {
		for _, n := range names {
			t[strings.ToLower(n)] = unitDef{category: category, name: names[0], factor: factor, offset: offset}
		}
	}
	// Length, base metre.
	add("length", 1e-9, 0, "nm", "nanometer", "nanometre", "nanometers", "nanometres")
	add("length", 1e-6, 0, "um", "µm", "micrometer", "micrometre", "micron", "microns")
	add("length", 1e-3, 0, "mm", "millimeter", "millimetre", "millimeters", "millimetres")
	add("length", 1e-2, 0, "cm", "centimeter", "centimetre", "centimeters", "centimetres")
	add("length", 1, 0, "m", "meter", "metre", "meters", "metres")
	add("length", 1e3, 0, "km", "kilometer", "kilometre", "kilometers", "kilometres")
	add("length", 0.0254, 0, "in", "inch", "inches", "\"")
	add("length", 0.3048, 0, "ft", "foot", "feet", "'")
	add("length", 0.9144, 0, "yd", "yard", "yards")
	add("length", 1609.344, 0, "mi", "mile", "miles")
	add("length", 1852, 0, "nmi", "nautical_mile", "nautical mile", "nautical miles")
	// Mass, base kilogram.
	add("mass", 1e-9, 0, "ug", "µg", "microgram", "micrograms")
	add("mass", 1e-6, 0, "mg", "milligram", "milligrams")
	add("mass", 1e-3, 0, "g", "gram", "grams")
	add("mass", 1, 0, "kg", "kilogram", "kilograms", "kilo", "kilos")
	add("mass", 1000, 0, "t", "tonne", "tonnes", "metric ton", "metric_ton")
	add("mass", 0.028349523125, 0, "oz", "ounce", "ounces")
	add("mass", 0.45359237, 0, "lb", "lbs", "pound", "pounds")
	add("mass", 6.35029318, 0, "st", "stone", "stones")
	add("mass", 907.18474, 0, "short_ton", "ton", "tons", "us ton")
	// Temperature, base kelvin.
	add("temperature", 1, 273.15, "C", "°c", "celsius", "centigrade", "degc")
	add("temperature", 5.0/9, 273.15-32*5.0/9, "F", "°f", "fahrenheit", "degf")
	add("temperature", 1, 0, "K", "kelvin", "kelvins")
	// Volume, base litre.
	add("volume", 1e-3, 0, "ml", "milliliter", "millilitre", "milliliters", "millilitres", "cm3", "cc")
	add("volume", 1e-2, 0, "cl", "centiliter", "centilitre")
	add("volume", 1e-1, 0, "dl", "deciliter", "decilitre")
	add("volume", 1, 0, "l", "liter", "litre", "liters", "litres", "dm3")
	add("volume", 1000, 0, "m3", "cubic meter", "cubic metre", "cubic meters", "cubic metres")
	add("volume", 0.00492892159375, 0, "tsp", "teaspoon", "teaspoons")
	add("volume", 0.01478676478125, 0, "tbsp", "tablespoon", "tablespoons")
	add("volume", 0.0295735295625, 0, "floz", "fl oz", "fl_oz", "fluid ounce", "fluid ounces")
	add("volume", 0.2365882365, 0, "cup", "cups")
	add("volume", 0.473176473, 0, "pt", "pint", "pints")
	add("volume", 0.946352946, 0, "qt", "quart", "quarts")
	add("volume", 3.785411784, 0, "gal", "gallon", "gallons", "us gallon")
	add("volume", 4.54609, 0, "imp_gal", "imperial gallon", "imperial gallons", "uk gallon")
	add("volume", 28.316846592, 0, "ft3", "cubic foot", "cubic feet")
	add("volume", 0.016387064, 0, "in3", "cubic inch", "cubic inches")
	// Area, base square metre.
	add("area", 1e-4, 0, "cm2", "square centimeter", "square centimetre")
	add("area", 1, 0, "m2", "sqm", "sq m", "square meter", "square metre", "square meters", "square metres")
	add("area", 1e4, 0, "ha", "hectare", "hectares")
	add("area", 1e6, 0, "km2", "sq km", "square kilometer", "square kilometre", "square kilometers", "square kilometres")
	add("area", 0.09290304, 0, "ft2", "sqft", "sq ft", "square foot", "square feet")
	add("area", 0.00064516, 0, "in2", "sq in", "square inch", "square inches")
	add("area", 4046.8564224, 0, "acre", "acres")
	add("area", 2589988.110336, 0, "mi2", "sq mi", "square mile", "square miles")
	// Speed, base metre per second.
	add("speed", 1, 0, "m/s", "mps", "meters per second", "metres per second")
	add("speed", 1/3.6, 0, "km/h", "kph", "kmh", "kmph", "kilometers per hour", "kilometres per hour")
	add("speed", 0.44704, 0, "mph", "mi/h", "miles per hour")
	add("speed", 0.3048, 0, "ft/s", "fps", "feet per second")
	add("speed", 1852.0/3600, 0, "knot", "knots", "kn", "kt")
	// Data size, base byte.
	add("data", 0.125, 0, "bit", "bits")
	add("data", 125, 0, "kbit", "kilobit", "kilobits", "kbps")
	add("data", 125e3, 0, "Mbit", "megabit", "megabits", "mbps")
	add("data", 125e6, 0, "Gbit", "gigabit", "gigabits", "gbps")
	add("data", 1, 0, "B", "byte", "bytes")
	add("data", 1e3, 0, "KB", "kilobyte", "kilobytes")
	add("data", 1e6, 0, "MB", "megabyte", "megabytes")
	add("data", 1e9, 0, "GB", "gigabyte", "gigabytes")
	add("data", 1e12, 0, "TB", "terabyte", "terabytes")
	add("data", 1e15, 0, "PB", "petabyte", "petabytes")
	add("data", 1<<10, 0, "KiB", "kibibyte", "kibibytes")
	add("data", 1<<20, 0, "MiB", "mebibyte", "mebibytes")
	add("data", 1<<30, 0, "GiB", "gibibyte", "gibibytes")
	add("data", 1<<40, 0, "TiB", "tebibyte", "tebibytes")
	add("data", 1<<50, 0, "PiB", "pebibyte", "pebibytes")
	// Time, base second.
	add("time", 1e-9, 0, "ns", "nanosecond", "nanoseconds")
	add("time", 1e-6, 0, "us", "µs", "microsecond", "microseconds")
	add("time", 1e-3, 0, "ms", "millisecond", "milliseconds")
	add("time", 1, 0, "s", "sec", "secs", "second", "seconds")
	add("time", 60, 0, "min", "mins", "minute", "minutes")
	add("time", 3600, 0, "h", "hr", "hrs", "hour", "hours")
	add("time", 86400, 0, "day", "d", "days")
	add("time", 7*86400, 0, "week", "wk", "weeks")
	add("time", 30.436875*86400, 0, "month", "months") // mean Gregorian month
	add("time", 365.2425*86400, 0, "year", "yr", "years")
	return t
}

func (cs *calcServer) lookupUnit(name string) (unitDef, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if u, ok := cs.units()[key]; ok {
		return u, nil
	}
	// Tolerate "degrees celsius", "sq ft" style prefixes.
	for _, p := range []string{"degrees ", "degree ", "deg "} {
		if u, ok := cs.units()[strings.TrimPrefix(key, p)]; ok {
			return u, nil
		}
	}
	return unitDef{}, fmt.Errorf("unknown unit %s; known units: %s", quote(name), cs.knownUnits())
}

// knownUnits lists canonical unit names by category for error messages.
func (cs *calcServer) knownUnits() string {
	byCat := map[string]map[string]bool{}
	for _, u := range cs.units() {
		if byCat[u.category] == nil {
			byCat[u.category] = map[string]bool{}
		}
		byCat[u.category][u.name] = true
	}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var parts []string
	for _, c := range cats {
		names := make([]string, 0, len(byCat[c]))
		for n := range byCat[c] {
			names = append(names, n)
		}
		sort.Strings(names)
		parts = append(parts, c+" ("+strings.Join(names, ", ")+")")
	}
	return strings.Join(parts, "; ")
}

type convertUnitsIn struct {
	Value float64 `json:"value" jsonschema:"the quantity to convert"`
	From  string  `json:"from" jsonschema:"unit of the value, e.g. km, lb, F, gal, MiB, hours"`
	To    string  `json:"to" jsonschema:"unit to convert to; must measure the same thing as from"`
}

type convertUnitsOut struct {
	Value     float64 `json:"value"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Result    float64 `json:"result"`
	Formatted string  `json:"formatted"`
	Category  string  `json:"category" jsonschema:"length, mass, temperature, volume, area, speed, data or time"`
}

func (cs *calcServer) convertUnits(_ context.Context, _ *mcp.CallToolRequest, in convertUnitsIn) (*mcp.CallToolResult, convertUnitsOut, error) {
	from, err := cs.lookupUnit(in.From)
	if err != nil {
		return nil, convertUnitsOut{}, fmt.Errorf("convert_units: from: %w", err)
	}
	to, err := cs.lookupUnit(in.To)
	if err != nil {
		return nil, convertUnitsOut{}, fmt.Errorf("convert_units: to: %w", err)
	}
	if from.category != to.category {
		return nil, convertUnitsOut{}, fmt.Errorf("convert_units: cannot convert %s (%s) to %s (%s)", from.name, from.category, to.name, to.category)
	}
	base := in.Value*from.factor + from.offset
	r := (base - to.offset) / to.factor
	if from.category == "temperature" && base < 0 {
		return nil, convertUnitsOut{}, fmt.Errorf("convert_units: %s %s is below absolute zero", fmtNum(in.Value), from.name)
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, convertUnitsOut{}, fmt.Errorf("convert_units: %s %s in %s is too large for a 64-bit float (over 1.8e308)", fmtNum(in.Value), from.name, to.name)
	}
	// Round away float noise (e.g. 0.30000000000000004) at 12 digits.
	r = roundSig(r, 12)
	out := convertUnitsOut{Value: in.Value, From: from.name, To: to.name, Result: r, Formatted: fmtNum(r), Category: from.category}
	return textResult("%s %s = %s %s", fmtNum(in.Value), from.name, out.Formatted, to.name), out, nil
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	if math.IsInf(p, 0) || p == 0 {
		return v
	}
	return math.Round(v*p) / p
}

type percentageIn struct {
	Operation string  `json:"operation" jsonschema:"percent_of, what_percent, change, increase or decrease"`
	A         float64 `json:"a" jsonschema:"first number: the percent for percent_of, the part for what_percent, the old value for change, the base amount for increase/decrease"`
	B         float64 `json:"b" jsonschema:"second number: the whole for percent_of and what_percent, the new value for change, the percent for increase/decrease"`
}

type percentageOut struct {
	Operation string  `json:"operation"`
	Result    float64 `json:"result"`
	Formatted string  `json:"formatted"`
}

func (cs *calcServer) percentage(_ context.Context, _ *mcp.CallToolRequest, in percentageIn) (*mcp.CallToolResult, percentageOut, error) {
	var r float64
	var text string
	a, b := fmtNum(in.A), fmtNum(in.B)
	switch in.Operation {
	case "percent_of":
		r = in.A / 100 * in.B
		text = fmt.Sprintf("%s%% of %s = %s", a, b, fmtNum(roundSig(r, 12)))
	case "what_percent":
		if in.B == 0 {
			return nil, percentageOut{}, fmt.Errorf("percentage: what_percent: the whole (b) must not be zero")
		}
		r = in.A / in.B * 100
		text = fmt.Sprintf("%s is %s%% of %s", a, fmtNum(roundSig(r, 12)), b)
	case "change":
		if in.A == 0 {
			return nil, percentageOut{}, fmt.Errorf("percentage: change: the old value (a) must not be zero")
		}
		r = (in.B - in.A) / math.Abs(in.A) * 100
		text = fmt.Sprintf("from %s to %s is a change of %+g%%", a, b, roundSig(r, 12))
	case "increase":
		r = in.A * (1 + in.B/100)
		text = fmt.Sprintf("%s + %s%% = %s", a, b, fmtNum(roundSig(r, 12)))
	case "decrease":
		r = in.A * (1 - in.B/100)
		text = fmt.Sprintf("%s - %s%% = %s", a, b, fmtNum(roundSig(r, 12)))
	default:
		return nil, percentageOut{}, fmt.Errorf("percentage: unknown operation %s (use percent_of, what_percent, change, increase or decrease)", quote(in.Operation))
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, percentageOut{}, fmt.Errorf("percentage: %s: the result is too large for a 64-bit float (over 1.8e308)", in.Operation)
	}
	r = roundSig(r, 12)
	return textResult("%s", text), percentageOut{Operation: in.Operation, Result: r, Formatted: fmtNum(r)}, nil
}
