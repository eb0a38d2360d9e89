package chatloop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseEvent is one server-sent event: its type (the "event:" field, often
// empty) and its data lines joined with "\n".
type sseEvent struct {
	name string
	data []byte
}

// errTooLarge is a provider response or event past its limit; the request
// fails, the process does not grow.
type errTooLarge struct {
	what  string
	limit int
}

func (e errTooLarge) Error() string {
	return fmt.Sprintf("%s is larger than the %d MiB limit", e.what, e.limit>>20)
}

// sseReader reads server-sent events (the text/event-stream format both
// providers stream in). An event may arrive split across any number of
// reads; it is held whole in memory, so its size is bounded by maxEvent.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), maxEvent: maxEvent}
}

// next returns the next event with data, or io.EOF at the end of the
// stream. Comments (": keep-alive") and events without data are skipped,
// as the format says.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	size := 0
	for {
		line, err := s.line(&size)
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				// A last event without its blank line still counts.
				ev.data = data.Bytes()
				return ev, nil
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.data = data.Bytes()
				return ev, nil
			}
			ev, size = sseEvent{}, 0
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
}

// line reads one line without its ending (\n or \r\n), adding its length
// to *size and failing once the event passes maxEvent.
func (s *sseReader) line(size *int) ([]byte, error) {
	var long []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		*size += len(chunk)
		if *size > s.maxEvent {
			return nil, errTooLarge{"an event of the response stream", s.maxEvent}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		if err != nil {
			if len(chunk) > 0 && errors.Is(err, io.EOF) {
				// A last line without its newline.
				return bytes.TrimSuffix(chunk, []byte("\r")), nil
			}
			return nil, err
		}
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		return bytes.TrimSuffix(chunk, []byte("\r")), nil
	}
}
