package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// list serves GET /browsers in the configured shape and paging style.
func (s *Server) list(w http.ResponseWriter, r *http.Request, env *Environment) {
	all := env.Profiles
	items, page, pages, offset := all, 1, 1, 0
	size := s.opts.PageSize
	if s.opts.Paging != "" && size > 0 {
		q := r.URL.Query()
		page = max(atoiOr(q.Get("page"), 1), 1)
		offset = max(atoiOr(q.Get("offset"), 0), 0)
		if s.opts.Paging != "offset_headers" {
			offset = (page - 1) * size
		}
		pages = max((len(all)+size-1)/size, 1)
		items = all[min(offset, len(all)):min(offset+size, len(all))]
	}
	more := offset+len(items) < len(all)
	self := *r.URL
	self.Scheme, self.Host = "http", r.Host
	pageURL := func(n int) string {
		u := self
		q := u.Query()
		q.Set("page", strconv.Itoa(n))
		u.RawQuery = q.Encode()
		return u.String()
	}

	envelope := map[string]any{}
	switch s.opts.Paging {
	case "link":
		if more {
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="first"`, pageURL(page+1), pageURL(1)))
		}
	case "next_url":
		envelope["next"] = nil
		if more {
			envelope["next"] = pageURL(page + 1)
		}
	case "page_number":
		envelope["page"], envelope["total_pages"] = page, pages
	case "offset_headers":
		w.Header().Set("X-Has-More", strconv.FormatBool(more))
		if more {
			w.Header().Set("X-Next-Offset", strconv.Itoa(offset+len(items)))
		}
	case "has_more":
		envelope["has_more"] = more
	case "offhost":
		if more {
			w.Header().Set("Link", fmt.Sprintf(`<http://elsewhere.invalid/api/v1/browsers?page=%d>; rel="next"`, page+1))
		}
	case "loop":
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, pageURL(1)))
	}

	body := s.listBody(items, len(all), envelope)
	if s.opts.Truncate {
		body = body[:len(body)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// listBody writes the records byte for byte inside the configured shape.
func (s *Server) listBody(items []json.RawMessage, total int, envelope map[string]any) []byte {
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, p := range items {
		if i > 0 {
			arr.WriteByte(',')
		}
		arr.Write(p)
	}
	arr.WriteByte(']')

	shape := s.opts.Shape
	if shape == "" && len(envelope) > 0 {
		shape = "data"
	}
	switch shape {
	case "data":
		return object(envelope, "data", arr.Bytes())
	case "profiles_total":
		envelope["totalCount"] = total
		return object(envelope, "profiles", arr.Bytes())
	case "data_items":
		inner := object(map[string]any{"count": total}, "items", arr.Bytes())
		return object(envelope, "data", inner)
	}
	return arr.Bytes()
}

// object writes fields as a JSON object with raw spliced in under name, byte
// for byte: json.Marshal would compact the records.
func object(fields map[string]any, name string, raw []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{%q: ", name)
	b.Write(raw)
	for k, v := range fields {
		enc, err := json.Marshal(v)
		if err != nil {
			panic(err) // plain values only
		}
		fmt.Fprintf(&b, ", %q: %s", k, enc)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}
