package builtin

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is a small recursive-descent evaluator for arithmetic. It never
// executes code: the grammar only has numbers, named constants, a fixed set
// of functions and operators.
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ ("^" | "**") unary ]      right-associative; -2^2 = -4
//	primary = number | name | name "(" [ expr { "," expr } ] ")" | "(" expr ")"

// Bounds of an expression: its length, and how deeply parentheses, signs
// and powers may nest (the parser recurses once per level). Values are
// float64, so no intermediate can grow in size: an overflow is +Inf and
// fails the evaluation with a clear error.
const (
	maxExprLen   = 4096
	maxExprDepth = 200
)

// exprError reports a problem at a byte offset in the expression.
type exprError struct {
	pos int
	msg string
}

func (e *exprError) Error() string { return fmt.Sprintf("%s at position %d", e.msg, e.pos+1) }

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // + - * / % ^ ( ) ,
)

type token struct {
	kind tokKind
	text string
	num  float64
	pos  int
}

func tokenize(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_') {
				j++
			}
			// Exponent: 1e10, 2.5E-3.
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			text := strings.ReplaceAll(src[i:j], "_", "")
			v, err := strconv.ParseFloat(text, 64)
			if errors.Is(err, strconv.ErrRange) {
				return nil, &exprError{i, fmt.Sprintf("number %s is too large for a 64-bit float (over 1.8e308)", quote(src[i:j]))}
			}
			if err != nil {
				return nil, &exprError{i, fmt.Sprintf("invalid number %s", quote(src[i:j]))}
			}
			toks = append(toks, token{kind: tokNum, text: src[i:j], num: v, pos: i})
			i = j
		case c == '×':
			toks = append(toks, token{kind: tokOp, text: "*", pos: i})
			i += size
		case c == '÷':
			toks = append(toks, token{kind: tokOp, text: "/", pos: i})
			i += size
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
					break
				}
				j += n
			}
			toks = append(toks, token{kind: tokIdent, text: strings.ToLower(src[i:j]), pos: i})
			i = j
		case c == '*' && i+1 < len(src) && src[i+1] == '*':
			toks = append(toks, token{kind: tokOp, text: "^", pos: i})
			i += 2
		case strings.ContainsRune("+-*/%^(),", c):
			toks = append(toks, token{kind: tokOp, text: string(c), pos: i})
			i++
		default:
			return nil, &exprError{i, fmt.Sprintf("unexpected character %q", c)}
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(src)}), nil
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tokOp && t.text == s
}

// evalExpr parses and evaluates src, returning a finite number or an error
// that names the position of the problem.
func evalExpr(src string) (float64, error) {
	if strings.TrimSpace(src) == "" {
		return 0, fmt.Errorf("empty expression")
	}
	if len(src) > maxExprLen {
		return 0, fmt.Errorf("expression too long (%d bytes, at most %d): split the calculation into steps", len(src), maxExprLen)
	}
	toks, err := tokenize(src)
	if err != nil {
		return 0, err
	}
	p := &parser{toks: toks}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if t := p.peek(); t.kind != tokEOF {
		if t.kind == tokNum || t.kind == tokIdent || t.text == "(" {
			return 0, &exprError{t.pos, fmt.Sprintf("missing operator before %q (write 2*x, not 2x)", t.text)}
		}
		return 0, &exprError{t.pos, fmt.Sprintf("unexpected %q", t.text)}
	}
	if math.IsNaN(v) {
		return 0, fmt.Errorf("result is not a number (e.g. sqrt of a negative number or 0/0)")
	}
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("result overflows (infinite)")
	}
	return v, nil
}

// enter counts one level of nesting; the caller must defer p.leave().
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxExprDepth {
		return &exprError{p.peek().pos, fmt.Sprintf("expression nested too deeply (more than %d levels of parentheses, signs or powers)", maxExprDepth)}
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expr() (float64, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return 0, err
	}
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		r, err := p.term()
		if err != nil {
			return 0, err
		}
		if op == "+" {
			v += r
		} else {
			v -= r
		}
	}
	return v, nil
}

func (p *parser) term() (float64, error) {
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.next()
		r, err := p.unary()
		if err != nil {
			return 0, err
		}
		switch op.text {
		case "*":
			v *= r
		case "/":
			if r == 0 {
				return 0, &exprError{op.pos, "division by zero"}
			}
			v /= r
		case "%":
			if r == 0 {
				return 0, &exprError{op.pos, "modulo by zero"}
			}
			v = math.Mod(v, r)
		}
	}
	return v, nil
}

func (p *parser) unary() (float64, error) {
	if p.isOp("-") || p.isOp("+") {
		op := p.next().text
		defer p.leave()
		if err := p.enter(); err != nil {
			return 0, err
		}
		v, err := p.unary()
		if op == "-" {
			v = -v
		}
		return v, err
	}
	return p.power()
}

func (p *parser) power() (float64, error) {
	base, err := p.primary()
	if err != nil {
		return 0, err
	}
	if p.isOp("^") {
		p.next()
		defer p.leave()
		if err := p.enter(); err != nil {
			return 0, err
		}
		exp, err := p.unary()
		if err != nil {
			return 0, err
		}
		return math.Pow(base, exp), nil
	}
	return base, nil
}

func (p *parser) primary() (float64, error) {
	t := p.next()
	switch t.kind {
	case tokNum:
		return t.num, nil
	case tokIdent:
		if p.isOp("(") {
			return p.call(t)
		}
		switch t.text {
		case "pi", "π":
			return math.Pi, nil
		case "e":
			return math.E, nil
		case "tau":
			return 2 * math.Pi, nil
		case "phi":
			return math.Phi, nil
		}
		if _, ok := lookupFunc(t.text); ok {
			return 0, &exprError{t.pos, fmt.Sprintf("function %s needs parentheses: %s(x)", t.text, t.text)}
		}
		return 0, &exprError{t.pos, fmt.Sprintf("unknown name %s (constants: pi, e, tau, phi; functions: %s)", quote(t.text), funcNames)}
	case tokOp:
		if t.text == "(" {
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			if !p.isOp(")") {
				return 0, &exprError{p.peek().pos, "missing closing parenthesis"}
			}
			p.next()
			return v, nil
		}
		return 0, &exprError{t.pos, fmt.Sprintf("unexpected %q, expected a number, name or '('", t.text)}
	default:
		return 0, &exprError{t.pos, "unexpected end of expression"}
	}
}

func (p *parser) call(name token) (float64, error) {
	p.next() // "("
	var args []float64
	if !p.isOp(")") {
		for {
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			args = append(args, v)
			if p.isOp(",") {
				p.next()
				continue
			}
			break
		}
	}
	if !p.isOp(")") {
		return 0, &exprError{p.peek().pos, fmt.Sprintf("missing ')' after arguments of %s", name.text)}
	}
	p.next()
	f, ok := lookupFunc(name.text)
	if !ok {
		return 0, &exprError{name.pos, fmt.Sprintf("unknown function %s (available: %s)", quote(name.text), funcNames)}
	}
	if len(args) < f.minArgs || (f.maxArgs >= 0 && len(args) > f.maxArgs) {
		return 0, &exprError{name.pos, fmt.Sprintf("%s takes %s, got %d", name.text, f.arity(), len(args))}
	}
	v, err := f.fn(args)
	if err != nil {
		return 0, &exprError{name.pos, fmt.Sprintf("%s: %v", name.text, err)}
	}
	return v, nil
}

type function struct {
	minArgs, maxArgs int // maxArgs < 0: variadic
	fn               func(a []float64) (float64, error)
}

func (f function) arity() string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d argument(s)", f.minArgs)
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("%d argument(s)", f.minArgs)
	default:
		return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
	}
}

const funcNames = "sqrt, cbrt, abs, round, floor, ceil, trunc, min, max, log, log2, ln, exp, sin, cos, tan, asin, acos, atan, atan2, deg, rad, hypot, pow, fact"

func unary1(f func(float64) float64) function {
	return function{1, 1, func(a []float64) (float64, error) { return f(a[0]), nil }}
}

// lookupFunc is a switch rather than a package map so the table is immutable.
func lookupFunc(name string) (function, bool) {
	switch name {
	case "sqrt":
		return function{1, 1, func(a []float64) (float64, error) {
			if a[0] < 0 {
				return 0, fmt.Errorf("square root of negative number %s", fmtNum(a[0]))
			}
			return math.Sqrt(a[0]), nil
		}}, true
	case "cbrt":
		return unary1(math.Cbrt), true
	case "abs":
		return unary1(math.Abs), true
	case "round":
		// round(x) or round(x, digits).
		return function{1, 2, func(a []float64) (float64, error) {
			if len(a) == 1 {
				return math.Round(a[0]), nil
			}
			if a[1] != math.Trunc(a[1]) || math.Abs(a[1]) > 15 {
				return 0, fmt.Errorf("digits must be a whole number from -15 to 15, got %s", fmtNum(a[1]))
			}
			p := math.Pow(10, a[1])
			return math.Round(a[0]*p) / p, nil
		}}, true
	case "floor":
		return unary1(math.Floor), true
	case "ceil":
		return unary1(math.Ceil), true
	case "trunc", "int":
		return unary1(math.Trunc), true
	case "min":
		return function{1, -1, func(a []float64) (float64, error) {
			m := a[0]
			for _, v := range a[1:] {
				m = math.Min(m, v)
			}
			return m, nil
		}}, true
	case "max":
		return function{1, -1, func(a []float64) (float64, error) {
			m := a[0]
			for _, v := range a[1:] {
				m = math.Max(m, v)
			}
			return m, nil
		}}, true
	case "log":
		// log(x) is base 10; log(x, b) is base b.
		return function{1, 2, func(a []float64) (float64, error) {
			if a[0] <= 0 {
				return 0, fmt.Errorf("logarithm of non-positive number %s", fmtNum(a[0]))
			}
			if len(a) == 2 {
				if a[1] <= 0 || a[1] == 1 {
					return 0, fmt.Errorf("invalid logarithm base %s", fmtNum(a[1]))
				}
				return math.Log(a[0]) / math.Log(a[1]), nil
			}
			return math.Log10(a[0]), nil
		}}, true
	case "log2":
		return function{1, 1, func(a []float64) (float64, error) {
			if a[0] <= 0 {
				return 0, fmt.Errorf("logarithm of non-positive number %s", fmtNum(a[0]))
			}
			return math.Log2(a[0]), nil
		}}, true
	case "ln":
		return function{1, 1, func(a []float64) (float64, error) {
			if a[0] <= 0 {
				return 0, fmt.Errorf("logarithm of non-positive number %s", fmtNum(a[0]))
			}
			return math.Log(a[0]), nil
		}}, true
	case "exp":
		return unary1(math.Exp), true
	case "sin":
		return unary1(math.Sin), true
	case "cos":
		return unary1(math.Cos), true
	case "tan":
		return unary1(math.Tan), true
	case "asin":
		return unary1(math.Asin), true
	case "acos":
		return unary1(math.Acos), true
	case "atan":
		return unary1(math.Atan), true
	case "atan2":
		return function{2, 2, func(a []float64) (float64, error) { return math.Atan2(a[0], a[1]), nil }}, true
	case "deg":
		return unary1(func(x float64) float64 { return x * 180 / math.Pi }), true
	case "rad":
		return unary1(func(x float64) float64 { return x * math.Pi / 180 }), true
	case "hypot":
		return function{2, 2, func(a []float64) (float64, error) { return math.Hypot(a[0], a[1]), nil }}, true
	case "pow":
		return function{2, 2, func(a []float64) (float64, error) { return math.Pow(a[0], a[1]), nil }}, true
	case "fact":
		return function{1, 1, func(a []float64) (float64, error) {
			if a[0] < 0 || a[0] != math.Trunc(a[0]) || a[0] > 170 {
				return 0, fmt.Errorf("factorial needs a whole number from 0 to 170, got %s", fmtNum(a[0]))
			}
			v := 1.0
			for i := 2.0; i <= a[0]; i++ {
				v *= i
			}
			return v, nil
		}}, true
	}
	return function{}, false
}

// fmtNum formats a float for people: integers without a fraction, others
// with up to 12 significant digits so 0.1+0.2 prints as 0.3.
func fmtNum(v float64) string {
	if v == 0 {
		return "0" // also normalises -0
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 12, 64)
}
