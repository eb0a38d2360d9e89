package rpcid

import "testing"

func TestLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`7,"result":{}`, 1},
		{`-1.5e3}`, 6},
		{`"a\"b","error":{}`, 6},
		{`"open`, 0},
		{`,"result"`, 0},
		{``, 0},
	}
	for _, tc := range tests {
		if got := Len([]byte(tc.in)); got != tc.want {
			t.Errorf("Len(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
