package standin

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// list serves GET /browsers: the whole list in the configured shape, or one
// page in the configured paging mode. Each mode (PagingModes) is a public
// API's convention: it reads its own parameters from the request, picks the
// window of profiles they name, and writes that page with its own hints
// (next link, cursor, totals, flags), misbehaving only as that API does.
func (s *Server) list(w http.ResponseWriter, r *http.Request, env *Environment) {
	s.ListRequests.Add(1)
	if s.opts.Oversize > 0 {
		streamOversize(w, s.opts.Oversize)
		return
	}
	var body []byte
	if s.opts.Paging == "" || s.opts.PageSize <= 0 {
		body = s.listBody(env.Profiles, len(env.Profiles), map[string]any{})
	} else {
		mode, ok := PagingModes[s.opts.Paging]
		if !ok {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "unknown paging mode " + s.opts.Paging})
			return
		}
		p := &pageRequest{s: s, w: w, r: r, all: env.Profiles, size: s.opts.PageSize}
		self := *r.URL
		self.Scheme, self.Host = "http", r.Host
		p.self = &self
		if body = mode.serve(p); body == nil {
			return // the mode answered already
		}
	}
	if s.opts.Truncate {
		body = body[:len(body)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// streamOversize writes a JSON array of generated records of about size
// bytes, chunked, a record at a time.
func streamOversize(w http.ResponseWriter, size int64) {
	w.Header().Set("Content-Type", "application/json")
	var written int64
	n, _ := io.WriteString(w, "[")
	written += int64(n)
	for i := 0; written < size; i++ {
		sep := ","
		if i == 0 {
			sep = ""
		}
		n, err := fmt.Fprintf(w, `%s{"profile_key":"bp_big_%09d","pad":"%0200d"}`, sep, i, 0)
		if err != nil {
			return // the client refused the body and went
		}
		written += int64(n)
	}
	io.WriteString(w, "]")
}

// madeUp returns n records with keys never sent before.
func madeUp(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"profile_key":"bp_made_up_%d"}`, madeUpKeys.Add(1)))
	}
	return out
}

var madeUpKeys atomic.Int64

// pageRequest is one request for a page.
type pageRequest struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	self *url.URL
	all  []json.RawMessage
	size int
}

// window returns the page starting at offset, and whether more follow.
func (p *pageRequest) window(offset int) ([]json.RawMessage, bool) {
	offset = min(max(offset, 0), len(p.all))
	end := min(offset+p.size, len(p.all))
	return p.all[offset:end], end < len(p.all)
}

// token is the bearer token the request carried.
func (p *pageRequest) token() string {
	return strings.TrimPrefix(p.r.Header.Get("Authorization"), "Bearer ")
}

func (p *pageRequest) pages() int { return max((len(p.all)+p.size-1)/p.size, 1) }

// pageNumber returns the 0-based index of the page asked for in param,
// which the service counts from base; the first page when absent.
func (p *pageRequest) pageNumber(param string, base int) int {
	return max(p.number(param)-base, 0)
}

func (p *pageRequest) number(param string) int {
	n, _ := strconv.Atoi(p.r.URL.Query().Get(param))
	return n
}

// cursor decodes the opaque token in param into an offset.
func (p *pageRequest) cursor(param string) int {
	raw, err := base64.RawURLEncoding.DecodeString(p.r.URL.Query().Get(param))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
	return n
}

// token is an opaque cursor for an offset.
func token(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset)))
}

// with returns this request's address with the query parameter set.
func (p *pageRequest) with(param string, value any) string {
	u := *p.self
	q := u.Query()
	q.Set(param, fmt.Sprint(value))
	u.RawQuery = q.Encode()
	return u.String()
}

// link returns an address under this environment's base: rest replaces
// "/browsers…" in the path.
func (p *pageRequest) link(rest string) string {
	base, _, _ := strings.Cut(p.self.Path, "/browsers")
	return "http://" + p.self.Host + base + rest
}

// when is v when cond holds, and nil (JSON null) when not.
func (p *pageRequest) when(cond bool, v string) any {
	if cond {
		return v
	}
	return nil
}

func keyOf(rec json.RawMessage) string {
	var r struct {
		Key string `json:"profile_key"`
	}
	_ = json.Unmarshal(rec, &r)
	return r.Key
}

// listBody writes the records byte for byte inside the configured shape.
func (s *Server) listBody(items []json.RawMessage, total int, envelope map[string]any) []byte {
	arr := array(items)
	shape := s.opts.Shape
	if shape == "" && len(envelope) > 0 {
		shape = "data"
	}
	switch shape {
	case "data":
		return object(envelope, "data", arr)
	case "profiles_total":
		envelope["totalCount"] = total
		return object(envelope, "profiles", arr)
	case "data_items":
		inner := object(map[string]any{"count": total}, "items", arr)
		return object(envelope, "data", inner)
	}
	return arr
}

// array writes records as a JSON array, byte for byte.
func array(items []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, p := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// object writes fields as a JSON object, with each raw (name, value) pair
// spliced in first, byte for byte: json.Marshal would compact the records.
// Fields are written in sorted order, so that bodies are reproducible.
func object(fields map[string]any, rawPairs ...any) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := ""
	for i := 0; i+1 < len(rawPairs); i += 2 {
		fmt.Fprintf(&b, "%s%q: ", sep, rawPairs[i])
		switch v := rawPairs[i+1].(type) {
		case []byte:
			b.Write(v)
		case json.RawMessage:
			b.Write(v)
		}
		sep = ", "
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		enc, err := json.Marshal(fields[k])
		if err != nil {
			panic(err) // plain values only
		}
		fmt.Fprintf(&b, "%s%q: %s", sep, k, enc)
		sep = ", "
	}
	b.WriteByte('}')
	return b.Bytes()
}
