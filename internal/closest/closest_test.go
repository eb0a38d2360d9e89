package closest

import (
	"reflect"
	"testing"
)

func TestClosest(t *testing.T) {
	cands := []string{"weather__get_forecast", "weather__get_current", "math__add", "math__multiply", "clock__now",
		"search__brave_web_search", "search__brave_local_search"}
	tests := []struct {
		name string
		n    int
		want []string
	}{
		{"math__ad", 3, []string{"math__add"}},
		{"math__adD", 3, []string{"math__add"}},
		{"weather__get_forcast", 3, []string{"weather__get_forecast"}},
		{"get_forecast", 3, []string{"weather__get_forecast"}},
		{"weather.get-forecast", 3, []string{"weather__get_forecast"}},
		{"weather__forecast_get", 1, []string{"weather__get_forecast"}},
		{"brave_search", 3, nil}, // shares words with two tools but is close to neither
		{"zzzz", 3, nil},
		{"nope", 3, nil},
		{"", 3, nil},
		{"math__add", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Closest(tc.name, cands, tc.n)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

func TestClosestOrderAndLimit(t *testing.T) {
	cands := []string{"math__adder", "math__add", "math__adds", "math__add"}
	got := Closest("math__ad", cands, 2)
	if want := []string{"math__add", "math__adds"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
