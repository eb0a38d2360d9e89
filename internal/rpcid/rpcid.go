// Package rpcid reads the id of a JSON-RPC message in place, without
// decoding the message: upstream (a dropped answer's id), hub (the answers
// its stdio server writes) and gateway (whether a flush is the whole
// answer) each look at a message's first bytes only, and must agree on
// where an id ends.
package rpcid

// Len is the length of the JSON-RPC id (a number or a string) at the
// start of b, or 0.
func Len(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	i := 0
	for i < len(b) && (b[i] == '-' || b[i] == '+' || b[i] == '.' || b[i] == 'e' || b[i] == 'E' || (b[i] >= '0' && b[i] <= '9')) {
		i++
	}
	return i
}
