package drover

import (
	"bytes"
	"encoding/json"
	"sync"
)

// decodeArgs decodes a job's args into the zero value v exactly as
// json.Unmarshal would,
// through a pooled json.Decoder. json.Unmarshal makes its decoder state
// afresh for every call and scans the input once to validate it and once
// more to decode it; a reused Decoder keeps its state and scans once. For
// the args of a noop job that is 0.35 µs instead of 0.63 and one
// allocation instead of five (decode_test.go), out of a few µs of client
// CPU per job.
//
// What the Decoder would accept and json.Unmarshal would not (a second
// value after the first) and every error fall back to json.Unmarshal, so
// that a handler sees the same values and errors either way (from a zero
// v again, since the Decoder may have filled some of it), and the decoder
// is dropped rather than reused with input left in its buffer.
func decodeArgs[T any](data []byte, v *T) error {
	if len(data) > maxPooledArgs {
		return json.Unmarshal(data, v)
	}
	d := argsDecoders.Get().(*argsDecoder)
	d.r.Reset(data)
	start := d.dec.InputOffset()
	if err := d.dec.Decode(v); err != nil {
		var zero T
		*v = zero
		return json.Unmarshal(data, v)
	}
	// A pooled decoder has read all its input, so the offset counts this
	// value alone; what it left unread is dropped with it.
	if rest := data[d.dec.InputOffset()-start:]; len(rest) > 0 {
		if len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
			var zero T
			*v = zero
			return json.Unmarshal(data, v)
		}
		return nil
	}
	argsDecoders.Put(d)
	return nil
}

// maxPooledArgs bounds the args a pooled decoder reads: its buffer grows
// to the largest value it decoded and never shrinks, so larger args are
// decoded by json.Unmarshal instead of kept in a pool.
const maxPooledArgs = 4 << 10

// argsDecoder is a json.Decoder reading from a reader it is reset on.
type argsDecoder struct {
	r   *bytes.Reader
	dec *json.Decoder
}

var argsDecoders = sync.Pool{New: func() any {
	r := bytes.NewReader(nil)
	return &argsDecoder{r: r, dec: json.NewDecoder(r)}
}}
