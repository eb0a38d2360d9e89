package builtin

import (
	"math"
	"strings"
	"testing"
)

func TestEvalExpr(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
	}{
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 / 4", 2.5},
		{"10 % 4", 2},
		{"2 ^ 3 ^ 2", 512}, // right-associative
		{"2 ** 10", 1024},
		{"-2 ^ 2", -4}, // unary minus binds looser than ^
		{"2 ^ -1", 0.5},
		{"--3", 3},
		{"+4 - -4", 8},
		{"1e3 + 2.5E-1", 1000.25},
		{"1_000_000 / 1000", 1000},
		{".5 * 4", 2},
		{"sqrt(16) + abs(-3)", 7},
		{"round(2.5) + floor(2.7) + ceil(2.1)", 3 + 2 + 3},
		{"round(3.14159, 2)", 3.14},
		{"min(3, 1, 2) + max(3, 1, 2)", 4},
		{"log(1000)", 3},
		{"log(8, 2)", 3},
		{"ln(e)", 1},
		{"sin(0) + cos(0) + tan(0)", 1},
		{"pi", math.Pi},
		{"PI * 2", 2 * math.Pi},
		{"fact(5)", 120},
		{"deg(pi)", 180},
		{"3 × 4 ÷ 2", 6},
		{"hypot(3, 4)", 5},
	} {
		got, err := evalExpr(tc.expr)
		if err != nil {
			t.Errorf("evalExpr(%q): %v", tc.expr, err)
			continue
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("evalExpr(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func TestEvalExprErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", "empty expression"},
		{"1 +", "unexpected end of expression"},
		{"(1 + 2", "missing closing parenthesis"},
		{"1 + 2)", `unexpected ")" at position 6`},
		{"1 / 0", "division by zero at position 3"},
		{"5 % 0", "modulo by zero"},
		{"2x", "missing operator"},
		{"foo(1)", `unknown function "foo"`},
		{"bar", `unknown name "bar"`},
		{"sqrt", "needs parentheses"},
		{"sqrt(-1)", "square root of negative number -1"},
		{"log(0)", "logarithm of non-positive"},
		{"max()", "max takes at least 1 argument"},
		{"round(1,2,3)", "round takes 1 to 2 arguments, got 3"},
		{"1 $ 2", `unexpected character '$'`},
		{"10 ^ 400", "overflows"},
		{"1..2", "invalid number"},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), "nested too deeply"},
		{strings.Repeat("-", 300) + "1", "nested too deeply"},
		{strings.Repeat("1+", 3000) + "1", "too long"},
		{strings.Repeat("2^", 300) + "2", "nested too deeply"},
		{strings.Repeat("sqrt(", 300) + "1" + strings.Repeat(")", 300), "nested too deeply"},
		{"2^2^2^2^2", "overflows"},
		{"exp(1000) - exp(1000)", "not a number"},
		{"fact(171)", "whole number from 0 to 170"},
		{"fact(1e300)", "whole number from 0 to 170"},
		{"round(1, 400)", "digits must be a whole number from -15 to 15"},
		{"round(1, 0.5)", "digits must be a whole number"},
		{"1e999", "too large for a 64-bit float"},
		{"9" + strings.Repeat("9", 400), "too large for a 64-bit float"},
		{"\xff", "unexpected character"},
		{strings.Repeat("x", 4000), "(4000 bytes)"},
	} {
		_, err := evalExpr(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("evalExpr(%.40q) error = %v, want it to contain %q", tc.expr, err, tc.want)
		}
	}
}

func TestFmtNum(t *testing.T) {
	for v, want := range map[float64]string{0.1 + 0.2: "0.3", 42: "42", -0.0: "0", 1.0 / 3: "0.333333333333", 1e20: "1e+20", -2.5: "-2.5"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestCalcTools(t *testing.T) {
	cs, _ := connect(t, "calc", nil)
	runToolCases(t, cs, []toolCase{
		{name: "evaluate", tool: "evaluate", args: map[string]any{"expression": "0.1 + 0.2"}, text: []string{"0.1 + 0.2 = 0.3"}, fields: map[string]string{"formatted": `"0.3"`}},
		{name: "evaluate error", tool: "evaluate", args: map[string]any{"expression": "1 / (2 - 2)"}, wantErr: "division by zero"},
		{name: "evaluate missing arg", tool: "evaluate", args: map[string]any{}, wantErr: "expression"},
		{name: "km to mi", tool: "convert_units", args: map[string]any{"value": 10, "from": "km", "to": "miles"}, fields: map[string]string{"result": "6.21371192237", "category": `"length"`}},
		{name: "F to C", tool: "convert_units", args: map[string]any{"value": 212, "from": "F", "to": "celsius"}, fields: map[string]string{"result": "100"}, text: []string{"212 F = 100 C"}},
		{name: "C to K", tool: "convert_units", args: map[string]any{"value": -40, "from": "°C", "to": "F"}, fields: map[string]string{"result": "-40"}},
		{name: "below absolute zero", tool: "convert_units", args: map[string]any{"value": -500, "from": "C", "to": "K"}, wantErr: "below absolute zero"},
		{name: "lb to kg", tool: "convert_units", args: map[string]any{"value": 1, "from": "lb", "to": "kg"}, fields: map[string]string{"result": "0.45359237"}},
		{name: "gal to l", tool: "convert_units", args: map[string]any{"value": 1, "from": "gal", "to": "L"}, fields: map[string]string{"result": "3.785411784"}},
		{name: "GiB to MB", tool: "convert_units", args: map[string]any{"value": 1, "from": "GiB", "to": "MB"}, fields: map[string]string{"result": "1073.741824"}},
		{name: "Mbit to MB", tool: "convert_units", args: map[string]any{"value": 8, "from": "Mbit", "to": "MB"}, fields: map[string]string{"result": "1"}},
		{name: "hours to minutes", tool: "convert_units", args: map[string]any{"value": 1.5, "from": "hours", "to": "min"}, fields: map[string]string{"result": "90"}},
		{name: "mph to kmh", tool: "convert_units", args: map[string]any{"value": 60, "from": "mph", "to": "km/h"}, fields: map[string]string{"result": "96.56064"}},
		{name: "acre to m2", tool: "convert_units", args: map[string]any{"value": 1, "from": "acre", "to": "sq ft"}, fields: map[string]string{"result": "43560"}},
		{name: "mismatch", tool: "convert_units", args: map[string]any{"value": 1, "from": "kg", "to": "m"}, wantErr: "cannot convert kg (mass) to m (length)"},
		{name: "unknown unit", tool: "convert_units", args: map[string]any{"value": 1, "from": "furlong", "to": "m"}, wantErr: `unknown unit "furlong"; known units: area`},
		{name: "percent of", tool: "percentage", args: map[string]any{"operation": "percent_of", "a": 15, "b": 80}, fields: map[string]string{"result": "12"}},
		{name: "what percent", tool: "percentage", args: map[string]any{"operation": "what_percent", "a": 12, "b": 80}, fields: map[string]string{"result": "15"}},
		{name: "change", tool: "percentage", args: map[string]any{"operation": "change", "a": 80, "b": 92}, fields: map[string]string{"result": "15"}, text: []string{"+15%"}},
		{name: "decrease change", tool: "percentage", args: map[string]any{"operation": "change", "a": 200, "b": 150}, fields: map[string]string{"result": "-25"}},
		{name: "increase", tool: "percentage", args: map[string]any{"operation": "increase", "a": 80, "b": 15}, fields: map[string]string{"result": "92"}},
		{name: "decrease", tool: "percentage", args: map[string]any{"operation": "decrease", "a": 80, "b": 15}, fields: map[string]string{"result": "68"}},
		{name: "what percent of zero", tool: "percentage", args: map[string]any{"operation": "what_percent", "a": 1, "b": 0}, wantErr: "must not be zero"},
		{name: "bad operation", tool: "percentage", args: map[string]any{"operation": "times", "a": 1, "b": 2}, wantErr: "operation"},
		// Finite inputs whose result is not: a float64 cannot carry it, and
		// JSON cannot encode +Inf.
		{name: "convert overflows", tool: "convert_units", args: map[string]any{"value": 1e308, "from": "PB", "to": "bit"}, wantErr: "too large for a 64-bit float"},
		{name: "percentage overflows", tool: "percentage", args: map[string]any{"operation": "increase", "a": 1e308, "b": 1e308}, wantErr: "too large for a 64-bit float"},
		{name: "change overflows", tool: "percentage", args: map[string]any{"operation": "change", "a": 5e-324, "b": 1e308}, wantErr: "too large"},
		{name: "long expression quoted short", tool: "evaluate", args: map[string]any{"expression": strings.Repeat("1+", 32<<10)}, wantErr: "(65536 bytes): expression too long"},
		{name: "long unit quoted short", tool: "convert_units", args: map[string]any{"value": 1, "from": strings.Repeat("k", 64<<10), "to": "m"}, wantErr: "(65536 bytes); known units"},
	})
}
